package partition_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// wonGate holds member b's runner of one shard between its won campaign and
// the start of its leadership, until the test opens it.
type wonGate struct {
	mu    sync.Mutex
	shard string        // the shard held; "" when none is armed
	won   chan struct{} // closed when the runner reached the gate
	open  chan struct{} // closed by the test to let it through
}

// arm makes the gate hold the next won campaign of shard.
func (g *wonGate) arm(shard string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shard, g.won, g.open = shard, make(chan struct{}), make(chan struct{})
}

// hold is the runner's side (partition.RunHoldingWon).
func (g *wonGate) hold(shard string) {
	g.mu.Lock()
	if shard != g.shard {
		g.mu.Unlock()
		return
	}
	g.shard = ""
	won, open := g.won, g.open
	g.mu.Unlock()
	close(won)
	<-open
}

// stopNote is what b's OnStoppedLeading saw of one shard's leadership end:
// the reason, and the candidates waiting in the election at that instant.
type stopNote struct {
	reason  error
	waiting []string
}

// TestRunnerWonDuringAMoveIsWithdrawnThroughTheSuccessorCheck moves a shard
// to b and, while b's candidate has just won it (held between its
// assignment check and its leadership's start), moves it on to c. b's
// leadership then ends like a handoff, with ErrWithdrawn, once c's
// candidate waits in the election: at once, or, when c's candidate is late
// (its requests slowed by the proxy), once it arrives (the withdrawal
// waits for it, as a handoff waits for its successor). Either way c's
// candidate waits when b's leadership ends, c leads the shard next, and no
// two leaderships overlap. b used to stop at once with an internal reason
// the docs did not name, leaving the shard unled until c's candidate
// arrived.
func TestRunnerWonDuringAMoveIsWithdrawnThroughTheSuccessorCheck(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 6)
	proxy := zkc.NewProxyT(t)
	gate := &wonGate{}
	notes := make(chan stopNote, 16)
	var watched sync.Map // shard → true: b's stops to report
	probe := connect(t, 2*time.Second)
	elections := map[string]string{} // shard → its election's path, in the root's layout (set once a has made the root)
	noteStops := func(c *partition.Config) {
		next := c.OnStoppedLeading
		c.OnStoppedLeading = func(shard string, reason error) {
			if _, ok := watched.LoadAndDelete(shard); ok {
				notes <- stopNote{reason: reason, waiting: waitingIn(probe, elections[shard])}
			}
			next(shard, reason)
		}
	}
	a := startMember(t, root, "a", shards, tr)
	for _, s := range shards {
		elections[s] = electionOf(t, probe, root, s)
	}
	bm := newMember(t, connect(t, sessionTimeout), root, "b", shards, tr, noteStops)
	bm.runs = func(ctx context.Context) error { return partition.RunHoldingWon(ctx, bm.m, gate.hold) }
	bm.run(t)
	c := startMemberOn(t, connectTo(t, proxy.Addrs(), 2*time.Second), root, "c", shards, tr)
	ms := []*member{a, bm, c}
	waitBalanced(t, shards, ms, 20*time.Second)
	op := newOperator(t, root)

	for _, late := range []bool{false, true} {
		lead, _ := waitBalanced(t, shards, ms, 20*time.Second)
		var s string
		for shard, m := range lead {
			if m == "a" {
				s = shard
				break
			}
		}
		gate.arm(s)
		watched.Store(s, true)
		if _, err := op.Move(t.Context(), s, "b"); err != nil {
			t.Fatalf("Move(%s, b): %v", s, err)
		}
		select {
		case <-gate.won:
		case <-time.After(20 * time.Second):
			t.Fatalf("b's candidate did not win shard %s within 20s of its move to b", s)
		}
		if late {
			proxy.SetRequestLatency(700 * time.Millisecond)
		}
		if _, err := op.Move(t.Context(), s, "c"); err != nil {
			t.Fatalf("Move(%s, c): %v", s, err)
		}
		waitFor(t, 10*time.Second, "b to see shard "+s+" moved to c", func() (bool, string) {
			to := partition.TargetOf(bm.m, s)
			return to == "c", "target " + to
		})
		if !late {
			waitFor(t, 10*time.Second, "c's candidate to wait in shard "+s+"'s election", func() (bool, string) {
				w := waitingIn(probe, elections[s])
				return slices.Contains(w, "c"), fmt.Sprint(w)
			})
		}
		close(gate.open)
		var note stopNote
		select {
		case note = <-notes:
		case <-time.After(20 * time.Second):
			t.Fatalf("b's leadership of shard %s did not end within 20s of its move to c (late %v)", s, late)
		}
		proxy.Heal()
		if want := partition.ErrWithdrawn; !errors.Is(note.reason, want) {
			t.Errorf("late %v: b's leadership of %s ended with %v, want %v", late, s, note.reason, want)
		}
		if !slices.Contains(note.waiting, "c") {
			t.Errorf("late %v: b's leadership of %s ended while c's candidate was not waiting (waiting: %v)", late, s, note.waiting)
		}
		waitFor(t, 20*time.Second, "c to lead shard "+s, func() (bool, string) {
			m := leaders(t, ms)[s]
			return m == "c", "led by " + m
		})
	}
	tr.check(t, false)
}

// waitingIn lists the members whose candidates wait (not lead) in the
// election at p; nil if it cannot be read. It syncs first: sess's server
// may be a follower that has not applied a create the member's own server
// already showed it (a clean-clone run saw c's candidate missing so).
func waitingIn(sess *recipe.Session, p string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sess.Sync(ctx, p); err != nil {
		return nil
	}
	ps, err := recipe.Participants(ctx, sess, p)
	if err != nil {
		return nil
	}
	var out []string
	for _, x := range ps {
		if !x.Leader {
			out = append(out, x.ID)
		}
	}
	return out
}
