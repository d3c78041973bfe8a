package bench

import (
	"context"
	"fmt"
	"os"

	"github.com/go-zookeeper/zk"
)

// peerWarmup is how many resigns each library makes before its trials
// count (a fresh JVM or interpreter is slow the first times).
const peerWarmup = 3

// SideBySide is the peers scenario's table: for each way a leader steps
// down, each library's failover (separate processes, each candidate on its
// own session, timed from the instruction to the successor's own report)
// beside the floor measured on the same servers in the same run.
type SideBySide struct {
	// Trials is the failovers per library after a resign and after an
	// exit; KillTrials after a SIGKILL (and the expiry floor's trials).
	Trials     int `json:"trials"`
	KillTrials int `json:"kill_trials"`
	// Peers are the libraries in column order, each with its version or
	// why it could not run.
	Peers []PeerInfo `json:"peers"`
	// Rows are the steps: StepResign, StepExit, StepKill.
	Rows []StepRow `json:"rows"`
	// CreateThroughput is the create floor of the same run: ephemeral
	// sequential creates per second from one session.
	CreateThroughput float64 `json:"create_throughput_per_s"`
}

// PeerInfo names one library of the table.
type PeerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Missing says why the library was not measured (not installed, or
	// its candidates failed); its cells are missing too.
	Missing string `json:"missing,omitempty"`
	// Note says how it was run, when that matters to the figures.
	Note string `json:"note,omitempty"`
}

// StepRow is one way of stepping down, across the libraries.
type StepRow struct {
	Step  string    `json:"step"`
	Floor FloorDist `json:"floor"`
	Cells []Cell    `json:"cells"` // in Peers order
}

// FloorDist is a floor's name and distribution.
type FloorDist struct {
	Name string `json:"name"`
	Dist Dist   `json:"dist"`
}

// Cell is one library's failover after one step, with its ratios.
type Cell struct {
	Peer string `json:"peer"`
	// Dist is nil when the library is missing; Missing then says why.
	Dist    *Dist  `json:"dist,omitempty"`
	Missing string `json:"missing,omitempty"`
	// P50ToFloor and P99ToFloor divide this cell's p50 and p99 by the
	// floor's.
	P50ToFloor float64 `json:"p50_to_floor,omitempty"`
	P99ToFloor float64 `json:"p99_to_floor,omitempty"`
	// P50ToPeer divides this cell's p50 by each other measured library's.
	P50ToPeer map[string]float64 `json:"p50_to_peer,omitempty"`
}

// runPeers measures the floors, then each library's failovers.
func (e *env) runPeers(ctx context.Context, cfg Config, rep *Report) error {
	f, err := e.floors(ctx, cfg)
	if err != nil {
		return err
	}
	expiry, err := e.rawExpiry(ctx, cfg.PeerKillTrials)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "zkelect-bench-peers-")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)
	obs, err := e.rawConn(ctx)
	if err != nil {
		return err
	}
	defer obs.Close()
	sb := &SideBySide{Trials: cfg.PeerTrials, KillTrials: cfg.PeerKillTrials, CreateThroughput: f.throughput}
	floorOf := map[string]FloorDist{
		StepResign: {Name: "delete→watch notification", Dist: *f.notify},
		StepExit:   {Name: "delete→watch notification", Dist: *f.notify},
		StepKill:   {Name: "session-expiry detection", Dist: expiry},
	}
	measured := map[string]map[string]*Dist{} // step → peer → dist
	for _, p := range peers(ctx, dir, cfg.ChildCommand) {
		cfg.Logf("bench: peers: %s", p.name)
		dists, err := e.measurePeer(ctx, cfg, p, obs)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			p.missing = fmt.Sprintf("failed: %v", err)
		}
		sb.Peers = append(sb.Peers, PeerInfo{Name: p.name, Version: p.version, Missing: p.missing, Note: p.note})
		for step, d := range dists {
			if measured[step] == nil {
				measured[step] = map[string]*Dist{}
			}
			measured[step][p.name] = d
		}
	}
	for _, step := range []string{StepResign, StepExit, StepKill} {
		sb.Rows = append(sb.Rows, newStepRow(step, floorOf[step], sb.Peers, measured[step]))
	}
	rep.SideBySide = sb
	return nil
}

// measurePeer runs p's trials for every step; on an error it returns the
// steps measured so far with it.
func (e *env) measurePeer(ctx context.Context, cfg Config, p peer, obs *zk.Conn) (map[string]*Dist, error) {
	dists := map[string]*Dist{}
	if p.missing != "" {
		return dists, nil
	}
	el, err := e.startPeerElection(ctx, p, "/bench/peers/"+p.name, obs)
	if err != nil {
		return dists, err
	}
	defer el.close()
	if _, err := el.trials(ctx, StepResign, peerWarmup); err != nil {
		return dists, fmt.Errorf("warm-up: %w", err)
	}
	for _, s := range []struct {
		step string
		n    int
	}{{StepResign, cfg.PeerTrials}, {StepExit, cfg.PeerTrials}, {StepKill, cfg.PeerKillTrials}} {
		d, err := el.trials(ctx, s.step, s.n)
		if err != nil {
			return dists, err
		}
		dists[s.step] = &d
	}
	return dists, nil
}

// newStepRow builds one row: each library's cell with its ratios to the
// floor and to the other measured libraries.
func newStepRow(step string, floor FloorDist, ps []PeerInfo, dists map[string]*Dist) StepRow {
	row := StepRow{Step: step, Floor: floor}
	for _, p := range ps {
		c := Cell{Peer: p.Name, Dist: dists[p.Name]}
		if c.Dist == nil {
			c.Missing = p.Missing
			if c.Missing == "" {
				c.Missing = "not measured"
			}
			row.Cells = append(row.Cells, c)
			continue
		}
		c.P50ToFloor = ratio(c.Dist.P50, floor.Dist.P50)
		c.P99ToFloor = ratio(c.Dist.P99, floor.Dist.P99)
		for _, o := range ps {
			if od := dists[o.Name]; o.Name != p.Name && od != nil {
				if c.P50ToPeer == nil {
					c.P50ToPeer = map[string]float64{}
				}
				c.P50ToPeer[o.Name] = ratio(c.Dist.P50, od.P50)
			}
		}
		row.Cells = append(row.Cells, c)
	}
	return row
}
