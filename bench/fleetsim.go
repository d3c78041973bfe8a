package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The fleet simulation (ScenarioFleetSim): one real member (its own
// process, real sessions, its share real elections) in a fleet of
// Config.FleetShards shards whose other members the driver simulates
// (fleetsimdriver.go), each fleet FleetShards/FleetShare members of
// FleetShare shards. Per fleet it measures the real member: the time to
// lead its share after it joins, its live heap, the CPU of a step and the
// bytes it reads per change (a simulated member's record write, as a
// renewed leadership makes one), the same during a rolling restart of
// simulated members, and the time to lead its new share after a
// simulated member crashes.

const (
	// fleetChanges is how many record writes the steady-state window makes,
	// fleetChangeGap apart.
	fleetChanges   = 20
	fleetChangeGap = 500 * time.Millisecond
	// fleetIdle is the window that measures the member at rest, subtracted
	// from the changes' window.
	fleetIdle = 5 * time.Second
	// fleetRestarts is how many simulated members restart, one after the
	// other, each down for fleetDown.
	fleetRestarts = 10
	fleetDown     = 200 * time.Millisecond
	// fleetJoinLimit bounds each wait for the real member to lead its share.
	fleetJoinLimit = 25 * time.Minute
)

// runFleetSim runs the fleet simulation for each of cfg.FleetShards.
func (e *env) runFleetSim(ctx context.Context, cfg Config, rep *Report) error {
	self := cfg.ChildCommand
	if len(self) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find this executable to run the member: %w", err)
		}
		self = []string{exe}
	}
	for _, n := range cfg.FleetShards {
		rows, err := e.fleetSim(ctx, self, n, cfg.FleetShare)
		if err != nil {
			return fmt.Errorf("%d shards: %w", n, err)
		}
		e.logRows(rows)
		rep.Results = append(rep.Results, rows...)
	}
	return nil
}

// fleetSim measures one fleet of n shards, share a member.
func (e *env) fleetSim(ctx context.Context, self []string, n, share int) ([]Result, error) {
	format := e.shardIDs
	if format == "" {
		format = "shard-%08d"
	}
	members := n / share
	root := fmt.Sprintf("/bench/fleetsim-%d-%d", n, time.Now().UnixNano())
	e.logf("bench: fleetsim: %d shards, %d members: writing %d simulated members", n, members, members-1)
	f, err := e.newSimFleet(ctx, root, format, members, n)
	if err != nil {
		return nil, err
	}
	defer f.close()
	argv := append(append([]string(nil), self...), fleetMemberArg, strings.Join(e.cluster.Addrs(), ","), root,
		strconv.Itoa(n), millis(e.sessionTimeout), simMemberID(0), format)
	p, err := startPeerProc(simMemberID(0), argv)
	if err != nil {
		return nil, err
	}
	m := &fleetProc{p: p, logf: e.logf}
	defer m.stop(ctx)
	s := &fleetRun{e: e, f: f, m: m, n: n, share: share, label: fmt.Sprintf("%d shards, %d members", n, members)}
	return s.run(ctx, time.Now())
}

// fleetRun is one fleet's measurement.
type fleetRun struct {
	e     *env
	f     *simFleet
	m     *fleetProc
	n     int
	share int
	label string
	rows  []Result
}

// run measures the steps in order; started is when the member started.
func (s *fleetRun) run(ctx context.Context, started time.Time) ([]Result, error) {
	var tl joinTimeline
	joined, err := s.m.awaitShare(ctx, func(st fleetStat) bool { tl.see(st, started, s.share); return s.atShare(st) }, nil, fleetJoinLimit)
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	s.add("joins: leads its share", msf(joined.at.Sub(started)), "ms",
		fmt.Sprintf("from its start to leading its %d shards; %.1f MB read meanwhile (every record once), %d steps; %s", s.share, mb(joined.read), joined.steps, &tl))
	time.Sleep(3 * time.Second) // the last handoffs' records, the step gap's back-off
	heap, err := s.m.heap(ctx)
	if err != nil {
		return nil, err
	}
	s.add("live heap", float64(heap)/(1<<20), "MB", fmt.Sprintf("after a collection; %d bytes a shard of its share, %d of the fleet", heap/int64(s.share), heap/int64(s.n)))
	if err := s.m.p.send("prof"); err != nil { // the steady state's profile, if asked for
		return nil, err
	}
	idle, err := s.window(ctx, fleetIdle, nil)
	if err != nil {
		return nil, err
	}
	if err := s.changes(ctx, idle); err != nil {
		return nil, err
	}
	if err := s.rollingRestart(ctx, idle); err != nil {
		return nil, err
	}
	if err := s.crash(ctx); err != nil {
		return nil, err
	}
	return s.rows, nil
}

// joinTimeline is when the member's join passed its milestones, from
// its start, as its counters were polled (every 100 ms): where a join's
// time goes.
type joinTimeline struct {
	assigned, first, half, cpu time.Duration // first assignment, first leadership, half its share led; CPU by then
	cpuAtAssigned              time.Duration
}

// see notes the milestones st (read at st.at) passed.
func (t *joinTimeline) see(st fleetStat, started time.Time, share int) {
	at := st.at.Sub(started)
	if t.assigned == 0 && st.assigned >= 0 {
		t.assigned, t.cpuAtAssigned = at, time.Duration(st.cpu)*time.Microsecond
	}
	if t.first == 0 && st.led > 0 {
		t.first = at
	}
	if t.half == 0 && st.led >= int64(share/2) {
		t.half = at
	}
	t.cpu = time.Duration(st.cpu) * time.Microsecond
}

func (t *joinTimeline) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	return fmt.Sprintf("first assignment at %s (CPU %s by then), first leadership at %s, half its share at %s; CPU %s in the join",
		r(t.assigned), r(t.cpuAtAssigned), r(t.first), r(t.half), r(t.cpu))
}

// atShare reports whether the member leads exactly its share.
func (s *fleetRun) atShare(st fleetStat) bool {
	return st.led == int64(s.share) && st.assigned == int64(s.share)
}

// add appends a row of this fleet.
func (s *fleetRun) add(what string, v float64, unit, note string) {
	s.rows = append(s.rows, Result{Scenario: fmt.Sprintf("fleetsim/%s (%s)", what, s.label), Value: v, Unit: unit, Note: note})
}

// delta is what a window cost the member.
type delta struct {
	took      time.Duration
	end       time.Time
	cpu, read int64 // µs, bytes
	steps     int64
}

// window reads the member's counters, runs act (nil: waits d) and reads
// them again.
func (s *fleetRun) window(ctx context.Context, d time.Duration, act func() error) (delta, error) {
	a, err := s.m.stat(ctx)
	if err != nil {
		return delta{}, err
	}
	if act == nil {
		time.Sleep(d)
	} else if err := act(); err != nil {
		return delta{}, err
	}
	b, err := s.m.stat(ctx)
	if err != nil {
		return delta{}, err
	}
	return delta{took: b.at.Sub(a.at), end: b.at, cpu: b.cpu - a.cpu, read: b.read - a.read, steps: b.steps - a.steps}, nil
}

// net returns w's CPU (µs) and bytes read less what idle's rate gives its
// duration.
func (w delta) net(idle delta) (cpu, read float64) {
	r := float64(w.took) / float64(idle.took)
	return float64(w.cpu) - r*float64(idle.cpu), float64(w.read) - r*float64(idle.read)
}

// changes writes fleetChanges renewals of simulated members' records and
// reports what each cost the member.
func (s *fleetRun) changes(ctx context.Context, idle delta) error {
	datas := make([][]byte, fleetChanges)
	who := make([]int, fleetChanges)
	var stored int
	for c := range datas {
		who[c] = 1 + (c*7919)%(s.f.members-1)
		d, err := s.f.renewal(who[c], c)
		if err != nil {
			return err
		}
		datas[c], stored = d, stored+len(d)
	}
	w, err := s.window(ctx, 0, func() error {
		for c, d := range datas {
			if err := s.f.write(who[c], d); err != nil {
				return err
			}
			time.Sleep(fleetChangeGap)
		}
		time.Sleep(2 * time.Second) // the last step
		return nil
	})
	if err != nil {
		return err
	}
	cpu, read := w.net(idle)
	note := fmt.Sprintf("%d record writes %s apart, each renewing one leadership; %d steps; idle %.1f ms CPU/s subtracted",
		fleetChanges, fleetChangeGap, w.steps, float64(idle.cpu)/1e3/idle.took.Seconds())
	s.add("CPU a change", cpu/1e3/fleetChanges, "ms", note)
	if w.steps > 0 {
		s.add("CPU a step", cpu/1e3/float64(w.steps), "ms", note)
	}
	s.add("bytes read a change", read/fleetChanges, "bytes", fmt.Sprintf("a record written is %d bytes stored (gzipped JSON)", stored/fleetChanges))
	return nil
}

// rollingRestart restarts fleetRestarts simulated members one after the
// other and reports whether the member kept leading its share.
func (s *fleetRun) rollingRestart(ctx context.Context, idle delta) error {
	n := min(fleetRestarts, s.f.members-2) // the last one crashes later, with no candidate left behind
	minLed, maxAssigned := int64(s.share), int64(s.share)
	restarted := map[int]bool{}
	backfill := func() error { return s.f.backfill(ctx, s.e, restarted) }
	w, err := s.window(ctx, 0, func() error {
		for i := 1; i <= n; i++ {
			if err := s.f.leave(i); err != nil {
				return err
			}
			time.Sleep(fleetDown)
			if err := s.f.rejoin(i); err != nil {
				return err
			}
			restarted[i] = true
			if err := backfill(); err != nil {
				return err
			}
			st, err := s.m.stat(ctx)
			if err != nil {
				return err
			}
			minLed, maxAssigned = min(minLed, st.led), max(maxAssigned, st.assigned)
		}
		return nil
	})
	if err != nil {
		return err
	}
	back, err := s.m.awaitShare(ctx, s.atShare, backfill, 2*time.Minute)
	if err != nil {
		return fmt.Errorf("after the rolling restart: %w", err)
	}
	cpu, read := w.net(idle)
	s.add("rolling restart: CPU a restart", cpu/1e3/float64(n), "ms",
		fmt.Sprintf("%d simulated members restart one after the other (down %s, back on a new session, new tokens): %d steps, %.0f KB read a restart; "+
			"it led at least %d of its %d shards throughout (assigned at most %d) and its share %s after the last",
			n, fleetDown, w.steps, read/1e3/float64(n), minLed, s.share, maxAssigned, back.at.Sub(w.end).Round(time.Millisecond)))
	return nil
}

// crash deletes the member znode of the last simulated member and times
// until the real member leads its new share.
func (s *fleetRun) crash(ctx context.Context) error {
	i := s.f.members - 1
	start := time.Now()
	if err := s.f.leave(i); err != nil {
		return err
	}
	st, err := s.m.awaitShare(ctx, func(st fleetStat) bool { return st.assigned > int64(s.share) && st.led == st.assigned }, nil, fleetJoinLimit)
	if err != nil {
		return fmt.Errorf("after a crash: %w", err)
	}
	s.add("a member crashes: leads its new share", msf(st.at.Sub(start)), "ms",
		fmt.Sprintf("%s's member znode deleted (its session gone); its %d shards are dealt at once (a reservation of a member that is not live is dealt), %d to the real member, which leads them",
			simMemberID(i), s.share, st.assigned-int64(s.share)))
	return nil
}

// mb is bytes in MB.
func mb(b int64) float64 { return float64(b) / 1e6 }
