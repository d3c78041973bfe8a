package partition_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
)

// activeShards counts the shards whose OnStartedLeading has begun and
// whose OnStoppedLeading has not been called.
func (tr *tracker) activeShards() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, ms := range tr.active {
		if len(ms) > 0 {
			n++
		}
	}
	return n
}

// gauge returns the value of the gauge name in reg (-1 when missing).
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

// newOperator returns an Operator of root on a session of its own.
func newOperator(t *testing.T, root string) *operator.Operator {
	t.Helper()
	op, err := operator.New(connect(t, 2*time.Second), root, nil)
	if err != nil {
		t.Fatalf("NewOperator: %v", err)
	}
	return op
}

// handoffCounter counts OnStoppedLeading reasons per member, beside the
// tracker's own bookkeeping.
type handoffCounter struct {
	mu       sync.Mutex
	handoffs map[string]int
}

func (h *handoffCounter) tune(tr *tracker, id string) func(*partition.Config) {
	return func(c *partition.Config) {
		c.OnStoppedLeading = func(shard string, reason error) {
			if errors.Is(reason, partition.ErrHandoff) {
				h.mu.Lock()
				h.handoffs[id]++
				h.mu.Unlock()
			}
			tr.stopped(id)(shard, reason)
		}
	}
}

func (h *handoffCounter) of(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.handoffs[id]
}

// TestDrainMovesExactlyTheDrainedMembersShardsOnce drains one of three
// members leading a third of 1,000 shards: exactly its shards move, each
// once, by graceful handoff (no overlap, no stale write accepted by the
// guard every leader writes to), nobody else's shard moves, the drained
// member keeps running, WaitDrained returns, and undrain gives it a share
// back.
func TestDrainMovesExactlyTheDrainedMembersShardsOnce(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 1000)
	tr.every = 250 * time.Millisecond // 1,000 leaders writing every 20ms would starve the sessions under -race
	hc := &handoffCounter{handoffs: map[string]int{}}
	var ms []*member
	for _, id := range []string{"a", "b", "c"} {
		// 2s sessions (the server's longest): 1,000 elections per member on
		// a loaded machine must not lose a connection mid-drain.
		ms = append(ms, startMemberOn(t, connect(t, 2*time.Second), root, id, shards, tr, noGrace, hc.tune(tr, id),
			func(c *partition.Config) { c.MaxConcurrentHandoffs = 64 }))
	}
	before, _ := waitBalanced(t, shards, ms, 50*time.Second)
	waitFor(t, 10*time.Second, "every leader's OnStartedLeading to have begun", func() (bool, string) {
		n := tr.activeShards()
		return n == len(shards), fmt.Sprintf("%d of %d", n, len(shards))
	})
	startsA, startsB, handedC := tr.startsOf("a"), tr.startsOf("b"), hc.of("c")
	var ofC int
	for _, m := range before {
		if m == "c" {
			ofC++
		}
	}
	op := newOperator(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
	defer cancel()
	drainStart := time.Now()
	if changed, err := op.Drain(ctx, "c", "kernel upgrade"); err != nil || !changed {
		t.Fatalf("Drain(c) = %v, %v; want true, nil", changed, err)
	}
	if changed, err := op.Drain(ctx, "c", "again"); err != nil || changed {
		t.Fatalf("second Drain(c) = %v, %v; want false, nil (idempotent)", changed, err)
	}
	if err := op.WaitDrained(ctx, "c"); err != nil {
		t.Fatalf("WaitDrained(c): %v", err)
	}
	drained := time.Since(drainStart)
	after, _ := waitBalanced(t, shards, ms[:2], 20*time.Second)
	waitFor(t, 10*time.Second, "every new leader's OnStartedLeading to have begun", func() (bool, string) {
		n := tr.activeShards()
		return n == len(shards), fmt.Sprintf("%d of %d", n, len(shards))
	})
	if n := len(ms[2].m.Leaderships()); n != 0 {
		t.Fatalf("drained c still leads %d shards", n)
	}
	if n := moved(before, after); n != ofC {
		t.Errorf("drain moved %d shards, want exactly c's %d", n, ofC)
	}
	for s, m := range before {
		if m != "c" && after[s] != m {
			t.Errorf("shard %s moved from %s to %s: only c's shards may move", s, m, after[s])
		}
	}
	if got := tr.startsOf("a") - startsA + tr.startsOf("b") - startsB; got != ofC {
		t.Errorf("a and b started %d leaderships, want %d (each of c's shards once)", got, ofC)
	}
	if got := hc.of("c") - handedC; got != ofC {
		t.Errorf("c handed off %d shards, want all of its %d gracefully", got, ofC)
	}
	tr.check(t, true)
	t.Logf("drain of c (%d of %d shards, 64 handoffs at a time) moved %d, each once; WaitDrained returned after %v",
		ofC, len(shards), moved(before, after), drained)

	if _, err := op.Drain(ctx, "b", ""); err != nil {
		t.Fatalf("Drain(b): %v", err)
	}
	if _, err := op.Drain(ctx, "a", ""); !errors.Is(err, operator.ErrRefused) {
		t.Fatalf("draining the last undrained member: %v, want ErrRefused", err)
	}
	for _, id := range []string{"b", "c"} {
		if _, err := op.Undrain(ctx, id); err != nil {
			t.Fatalf("Undrain(%s): %v", id, err)
		}
	}
	waitBalanced(t, shards, ms, 50*time.Second)
}

// TestFreezeHoldsThroughJoinAndRecoversCrashedMember freezes a root of
// three members (one a separate process): a member joining takes nothing,
// nobody hands off, yet the shards of the member process killed with
// SIGKILL are led again at once; unfreezing balances over everyone.
func TestFreezeHoldsThroughJoinAndRecoversCrashedMember(t *testing.T) {
	const n = 60
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, n)
	hc := &handoffCounter{handoffs: map[string]int{}}
	guardURL := tr.serve(t)
	regs := map[string]*prometheus.Registry{"a": prometheus.NewRegistry(), "b": prometheus.NewRegistry()}
	withRegistry := func(id string) func(*partition.Config) {
		return func(c *partition.Config) { c.Metrics = regs[id] }
	}
	a := startMember(t, root, "a", shards, tr, hc.tune(tr, "a"), withRegistry("a"))
	b := startMember(t, root, "b", shards, tr, hc.tune(tr, "b"), withRegistry("b"))
	child := startChild(t, "c", root, n, guardURL)
	waitFor(t, 30*time.Second, "the child to lead its share", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		return len(lead) == 2*n/3, fmt.Sprintf("a and b lead %d", len(lead))
	})
	before := leaders(t, []*member{a, b})
	handedBefore := map[string]int{"a": hc.of("a"), "b": hc.of("b")} // the first balance's
	op := newOperator(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	if _, err := op.Freeze(ctx, "maintenance window", 0); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	waitFor(t, 10*time.Second, "a and b to see the freeze (zkelect_partition_frozen)", func() (bool, string) {
		fa, fb := gauge(t, regs["a"], "zkelect_partition_frozen"), gauge(t, regs["b"], "zkelect_partition_frozen")
		return fa == 1 && fb == 1, fmt.Sprintf("a %v, b %v", fa, fb)
	})
	d := startMember(t, root, "d", shards, tr, hc.tune(tr, "d"))
	waitFor(t, 10*time.Second, "d registered", func() (bool, string) {
		live, err := partition.LiveMembers(ctx, d.sess, root)
		return err == nil && len(live) == 4, fmt.Sprint(live, err)
	})
	if err := child.Kill(); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	all := []*member{a, b, d}
	waitFor(t, 20*time.Second, "the crashed member's shards led again while frozen", func() (bool, string) {
		lead := leaders(t, all)
		return len(lead) == n, fmt.Sprintf("%d/%d led", len(lead), n)
	})
	after := leaders(t, all)
	for s, m := range before {
		if after[s] != m {
			t.Errorf("frozen: shard %s moved from %s to %s", s, m, after[s])
		}
	}
	for _, id := range []string{"a", "b", "d"} {
		if h := hc.of(id) - handedBefore[id]; h != 0 {
			t.Errorf("frozen: %s handed off %d shards", id, h)
		}
	}
	if got := len(d.m.Leaderships()); got == 0 {
		t.Errorf("frozen: the joined d, least loaded, took none of the crashed member's shards")
	}
	if _, err := op.Unfreeze(ctx); err != nil {
		t.Fatalf("Unfreeze: %v", err)
	}
	waitBalanced(t, shards, all, 20*time.Second)
	tr.check(t, false)
}

// TestFreezeExpiresByItself: a freeze given a duration lifts itself, and a
// join then gets its share.
func TestFreezeExpiresByItself(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	a := startMember(t, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	op := newOperator(t, root)
	if _, err := op.Freeze(t.Context(), "short", 2*time.Second); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	b := startMember(t, root, "b", shards, tr)
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	st, err := op.State(t.Context())
	if err != nil || st.Frozen(time.Now()) {
		t.Fatalf("balanced while the freeze still holds (%v, %v)", st.Freeze, err)
	}
	tr.check(t, true)
}

// TestMoveHandsOffOnceThenBalances moves a shard to another member: the
// old leader's OnStoppedLeading returns before the new leader's
// OnStartedLeading (strict tracker), WaitMoved returns once the new leader
// leads it and the move is cleared, and the balance holds (the receiver
// gave another shard away).
func TestMoveHandsOffOnceThenBalances(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	a := startMember(t, root, "a", shards, tr)
	b := startMember(t, root, "b", shards, tr)
	before, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	s := shardLedBy(t, before, "a")
	op := newOperator(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := op.Move(ctx, s, "nobody"); !errors.Is(err, operator.ErrRefused) {
		t.Fatalf("move to a member that is not live: %v, want ErrRefused", err)
	}
	if _, err := op.Move(ctx, "no-such-shard", "b"); !errors.Is(err, operator.ErrRefused) {
		t.Fatalf("move of a shard without an election: %v, want ErrRefused", err)
	}
	if changed, err := op.Move(ctx, s, "b"); err != nil || !changed {
		t.Fatalf("Move(%s, b) = %v, %v", s, changed, err)
	}
	if err := op.WaitMoved(ctx, s, "b"); err != nil {
		t.Fatalf("WaitMoved: %v", err)
	}
	after, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	if after[s] != "b" {
		t.Fatalf("moved shard %s led by %s, want b", s, after[s])
	}
	if n := moved(before, after); n != 2 {
		t.Errorf("a move moved %d shards, want 2 (the shard, and one b gave back)", n)
	}
	// Move reads who leads from the records, which lag the elections
	// WaitMoved follows by a write.
	waitRecordsShow(t, a.sess, root, after)
	if changed, err := op.Move(ctx, s, "b"); err != nil || changed {
		t.Errorf("moving a shard to its leader = %v, %v; want false, nil", changed, err)
	}
	// WaitMoved follows the elections; the member clears a move it
	// completed once its record shows the shard, a write later.
	waitFor(t, 20*time.Second, "the completed move cleared by its member", func() (bool, string) {
		st, err := op.State(ctx)
		return err == nil && len(st.Moves) == 0, fmt.Sprintf("moves left after completion: %v (%v)", st.Moves, err)
	})
	tr.check(t, true)
}

// TestPinKeepsShardOnMember pins a shard to a member: it moves there and
// stays through a join; unpin frees it.
func TestPinKeepsShardOnMember(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	a := startMember(t, root, "a", shards, tr)
	b := startMember(t, root, "b", shards, tr)
	before, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	s := shardLedBy(t, before, "b")
	op := newOperator(t, root)
	ctx := t.Context()
	if _, err := op.Pin(ctx, s, "a"); err != nil {
		t.Fatalf("Pin: %v", err)
	}
	if changed, err := op.Pin(ctx, s, "a"); err != nil || changed {
		t.Fatalf("second Pin = %v, %v; want false, nil", changed, err)
	}
	waitFor(t, 20*time.Second, "the pinned shard on a, balanced", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		ok, desc := balanced(shards, lead, 2)
		return ok && lead[s] == "a", desc
	})
	c := startMember(t, root, "c", shards, tr)
	after, _ := waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	if after[s] != "a" {
		t.Errorf("pinned shard %s moved to %s on a join", s, after[s])
	}
	if _, err := op.Unpin(ctx, s); err != nil {
		t.Fatalf("Unpin: %v", err)
	}
	st, _ := op.State(ctx)
	if len(st.Pins) != 0 {
		t.Errorf("pins after Unpin: %v", st.Pins)
	}
	tr.check(t, true)
}

// TestWeightsGiveProportionalShares runs members of weights 1, 2 and 3
// over 600 shards: they lead 100, 200 and 300; an operator's weight then
// moves only the shards it must.
func TestWeightsGiveProportionalShares(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 600)
	tr.every = 250 * time.Millisecond // see TestDrainMovesExactlyTheDrainedMembersShardsOnce
	var ms []*member
	for i, id := range []string{"a", "b", "c"} {
		ms = append(ms, startMemberOn(t, connect(t, 2*time.Second), root, id, shards, tr, func(c *partition.Config) { c.Weight = i + 1 }))
	}
	counts := func(want map[string]int) func() (bool, string) {
		return func() (bool, string) {
			got := map[string]int{}
			for _, mb := range ms {
				got[mb.id] = len(mb.m.Leaderships())
			}
			return maps.Equal(got, want), fmt.Sprint(got)
		}
	}
	waitFor(t, 50*time.Second, "100/200/300", counts(map[string]int{"a": 100, "b": 200, "c": 300}))
	before := leaders(t, ms)
	op := newOperator(t, root)
	if _, err := op.SetWeight(t.Context(), "a", 0); !errors.Is(err, operator.ErrRefused) {
		t.Fatalf("weight 0: %v, want ErrRefused", err)
	}
	if _, err := op.SetWeight(t.Context(), "a", 3); err != nil { // 3:2:3 over 600: 225/150/225
		t.Fatalf("SetWeight: %v", err)
	}
	waitFor(t, 30*time.Second, "225/150/225", counts(map[string]int{"a": 225, "b": 150, "c": 225}))
	if n := moved(before, leaders(t, ms)); n != 125 {
		t.Errorf("weight change moved %d shards, want the 125 it must (b's 50 and c's 75 excess to a)", n)
	}
	tr.check(t, true)
}

// shardLedBy returns a shard that leaders (shard → member) shows led by
// member, failing t when there is none.
func shardLedBy(t *testing.T, leaders map[string]string, member string) string {
	t.Helper()
	for id, m := range leaders {
		if m == member {
			return id
		}
	}
	t.Fatalf("no shard led by %s in %v", member, leaders)
	return ""
}
