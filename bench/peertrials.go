package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/znode"
)

// Ways the side-by-side scenario makes a leader step down, in table order.
const (
	StepResign = "resign" // the leader resigns and queues again
	StepExit   = "exit"   // the leader closes its candidate and session and exits
	StepKill   = "kill"   // the leader's process is killed with SIGKILL
)

// peerElection is two candidate processes of one library on one election
// path, taking turns as leader. The scenario's goroutine owns it.
type peerElection struct {
	e      *env
	p      peer
	path   string
	obs    *zk.Conn // the observer that checks the election is settled
	procs  [2]*peerProc
	leader int // index into procs of the process that leads
	n      int // candidates started, for ids
}

// startPeerElection starts a candidate of p on path, waits until it leads,
// then starts its standby.
func (e *env) startPeerElection(ctx context.Context, p peer, path string, obs *zk.Conn) (*peerElection, error) {
	if err := ensurePath(obs, path); err != nil {
		return nil, err
	}
	el := &peerElection{e: e, p: p, path: path, obs: obs}
	err := el.replace(ctx, 0)
	if err == nil {
		_, err = el.procs[0].await(ctx, "LEADER") // alone, it leads
	}
	if err == nil {
		err = el.replace(ctx, 1)
	}
	if err != nil {
		el.close()
		return nil, err
	}
	return el, nil
}

// replace starts a new candidate in slot i and waits for its READY.
func (el *peerElection) replace(ctx context.Context, i int) error {
	el.n++
	id := fmt.Sprintf("%s-%d", el.p.name, el.n)
	proc, err := startPeerProc(id, el.p.argv(el.e.cluster.ConnectString(), el.path, id, el.e.sessionTimeout))
	if err != nil {
		return err
	}
	el.procs[i] = proc
	_, err = proc.await(ctx, "READY")
	return err
}

// trials measures n failovers after step, each from the instruction to
// the moment the successor reported leading (its LEADER line's own stamp,
// see line.since).
func (el *peerElection) trials(ctx context.Context, step string, n int) (Dist, error) {
	samples := make([]time.Duration, 0, n)
	for range n {
		d, err := el.failover(ctx, step)
		if err != nil {
			return Dist{}, fmt.Errorf("%s failover %d of %d: %w", step, len(samples)+1, n, err)
		}
		samples = append(samples, d)
	}
	return NewDist(samples), nil
}

// failover makes the leader step down and times its successor.
func (el *peerElection) failover(ctx context.Context, step string) (time.Duration, error) {
	if err := el.awaitSettled(ctx); err != nil {
		return 0, err
	}
	cur, next := el.leader, 1-el.leader
	start := time.Now()
	var err error
	switch step {
	case StepResign:
		err = el.procs[cur].send("resign")
	case StepExit:
		err = el.procs[cur].send("exit")
	case StepKill:
		el.procs[cur].kill()
	}
	if err != nil {
		return 0, err
	}
	won, err := el.procs[next].await(ctx, "LEADER")
	if err != nil {
		return 0, err
	}
	el.leader = next
	if step != StepResign {
		if err := el.procs[cur].awaitExit(ctx); err != nil {
			return 0, err
		}
		if err := el.replace(ctx, cur); err != nil {
			return 0, err
		}
	}
	return won.since(start), nil
}

// awaitSettled waits until both candidates are in the election and the
// leader's znode is watched by a session other than its owner's: the
// standby waits on it, as a user's standby would between failovers.
func (el *peerElection) awaitSettled(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, acquireLimit)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		state, err := el.settled(ctx)
		if err == nil && state == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: %s election %s not settled (%s, last error %v): %w", el.p.name, el.path, state, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// settled returns "" when the election is settled, else what is missing.
func (el *peerElection) settled(ctx context.Context) (string, error) {
	kids, _, err := el.obs.Children(el.path)
	if err != nil {
		return "no listing", err
	}
	if len(kids) != 2 {
		return fmt.Sprintf("%d candidates", len(kids)), nil
	}
	slices.SortFunc(kids, func(a, b string) int { return seqOf(a) - seqOf(b) })
	first := el.path + "/" + kids[0]
	_, st, err := el.obs.Get(first)
	if err != nil {
		return "no leader znode", err
	}
	w, err := el.e.watchers(ctx, []string{first}, st.EphemeralOwner)
	if err != nil || w == 0 {
		return "leader's znode not watched yet", err
	}
	return "", nil
}

// seqOf is the sequence number ZooKeeper appended to a sequential znode's
// name (znode.Seq), or -1.
func seqOf(name string) int {
	if seq, ok := znode.Seq(name); ok {
		return int(seq)
	}
	return -1
}

// close kills both candidates.
func (el *peerElection) close() {
	for _, p := range el.procs {
		if p != nil {
			p.kill()
		}
	}
}
