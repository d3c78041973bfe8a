package partition_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestBalancedWhateverTheStartOrder starts members one after another, each
// after the previous ones lead everything: the first member up must not
// keep every shard, and each join moves about shards/members leaderships,
// all to the newcomer.
func TestBalancedWhateverTheStartOrder(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 60)
	var ms []*member
	var before map[string]string
	for i, id := range []string{"a", "b", "c"} {
		ms = append(ms, startMember(t, root, id, shards, tr))
		after, took := waitBalanced(t, shards, ms, 20*time.Second)
		n := moved(before, after)
		want := len(shards) / (i + 1)
		t.Logf("member %s joined: balanced after %v, %d leaderships moved (shards/members = %d)", id, took, n, want)
		if i > 0 && float64(n) > float64(want)*1.05 {
			t.Errorf("join of %s moved %d leaderships, want at most %d", id, n, want)
		}
		for s, m := range after {
			if before != nil && m != id && before[s] != m {
				t.Errorf("join of %s moved shard %s between old members (%s -> %s)", id, s, before[s], m)
			}
		}
		before = after
	}
	tr.check(t, true)
}

// noGrace disables the restart grace, so a leaver's shards are rebalanced
// at once.
func noGrace(c *partition.Config) { c.RestartGrace = -1 }

// TestGracefulStopMovesOnlyTheLeaversShards stops one of three members:
// its shards are led by the others within the handoff time (no session
// timeout), and no other shard moves.
func TestGracefulStopMovesOnlyTheLeaversShards(t *testing.T) {
	// The leaver's session is long, so the bound (half of it) leaves a
	// loaded machine seconds and stays far below its expiry.
	const leaverTimeout = 10 * time.Second
	zks := testenv.New(t, testenv.Options{MaxSessionTimeout: leaverTimeout})
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 60)
	a := startMemberOn(t, connectTo(t, zks.Addrs(), sessionTimeout), root, "a", shards, tr, noGrace)
	b := startMemberOn(t, connectTo(t, zks.Addrs(), sessionTimeout), root, "b", shards, tr, noGrace)
	c := startMemberOn(t, connectTo(t, zks.Addrs(), leaverTimeout), root, "c", shards, tr, noGrace)
	before, _ := waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	start := time.Now()
	c.stop(t)
	stopped := time.Since(start)
	after, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	took := time.Since(start)
	t.Logf("graceful stop: Run returned after %v, all shards led again after %v; %d moved", stopped, took, moved(before, after))
	if bound := leaverTimeout / 2; took >= bound {
		t.Errorf("shards of a stopped member took %v to be led again, not less than half its session timeout %v", took, leaverTimeout)
	}
	for s, m := range before {
		if m != "c" && after[s] != m {
			t.Errorf("shard %s moved from %s to %s although %s stayed", s, m, after[s], m)
		}
	}
	tr.check(t, true)
}

// TestSessionExpiryReentersAndKeepsShards expires one member's session:
// every one of its elections re-enters with a new znode (a larger token),
// it leads the same shards again (its restart grace), and the others keep
// theirs.
func TestSessionExpiryReentersAndKeepsShards(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	ms := []*member{
		startMember(t, root, "a", shards, tr),
		startMember(t, root, "b", shards, tr),
		startMember(t, root, "c", shards, tr),
	}
	before, _ := waitBalanced(t, shards, ms, 20*time.Second)
	old, oldID := ms[2].m.Leaderships(), ms[2].sess.ID()
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), ms[2].sess.Conn()); err != nil {
		t.Fatalf("expire session: %v", err)
	}
	renewed := waitFor(t, 20*time.Second, "c's new session", func() (bool, string) {
		id := ms[2].sess.ID()
		return id != 0 && id != oldID && ms[2].sess.Connected(), fmt.Sprintf("session %x", id)
	})
	rejoin := renewed + waitFor(t, 20*time.Second, "c to lead its shards again with new tokens", func() (bool, string) {
		now := ms[2].m.Leaderships()
		for s, tok := range old {
			if now[s] <= tok {
				return false, fmt.Sprintf("shard %s: token %v, before expiry %v", s, now[s], tok)
			}
		}
		return len(now) == len(old), fmt.Sprintf("c leads %d, led %d", len(now), len(old))
	})
	t.Logf("c leads its %d shards again %v after its session expired, %v after its new session (session timeout %v)",
		len(old), rejoin, rejoin-renewed, sessionTimeout)
	after, _ := waitBalanced(t, shards, ms, 20*time.Second)
	if n := moved(before, after); n != 0 {
		t.Errorf("%d shards moved after c's session expiry, want 0 (c within its restart grace)", n)
	}
	tr.check(t, false)
}

// TestRestartWithinGraceGetsShardsBack stops a member and starts it again
// (a new session) within its restart grace: it gets exactly its shards
// back, and the shards of the others never move.
func TestRestartWithinGraceGetsShardsBack(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	grace := func(c *partition.Config) { c.RestartGrace = 20 * time.Second }
	a := startMember(t, root, "a", shards, tr, grace)
	b := startMember(t, root, "b", shards, tr, grace)
	c := startMember(t, root, "c", shards, tr, grace)
	before, _ := waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	c.stop(t)
	waitFor(t, 10*time.Second, "a and b to lead every shard meanwhile", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		return len(lead) == len(shards), fmt.Sprintf("%d/%d led", len(lead), len(shards))
	})
	for s, m := range leaders(t, []*member{a, b}) {
		if before[s] != "c" && before[s] != m {
			t.Errorf("shard %s of %s moved to %s while c was away", s, before[s], m)
		}
	}
	c2 := startMember(t, root, "c", shards, tr, grace)
	after, _ := waitBalanced(t, shards, []*member{a, b, c2}, 20*time.Second)
	if n := moved(before, after); n != 0 {
		t.Errorf("%d shards differ from before the restart, want 0", n)
	}
	tr.check(t, true)
}

// TestHandoffDrainsBeforeTheNextLeaderStarts gives leaders a slow drain: a
// member joining takes its shards only after the old leader's callback
// returned and OnStoppedLeading ran, at most MaxConcurrentHandoffs at once.
func TestHandoffDrainsBeforeTheNextLeaderStarts(t *testing.T) {
	const drain, maxHandoffs = 100 * time.Millisecond, 2
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	slow := func(c *partition.Config) {
		c.OnStartedLeading = tr.started(c.MemberID, drain)
		c.MaxConcurrentHandoffs = maxHandoffs
	}
	a := startMember(t, root, "a", shards, tr, slow)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	b := startMember(t, root, "b", shards, tr, slow)
	_, took := waitBalanced(t, shards, []*member{a, b}, 30*time.Second)
	handoffs := tr.startsOf("b")
	t.Logf("%d handoffs of %v each, %d at a time, took %v", handoffs, drain, maxHandoffs, took)
	if floor := time.Duration(handoffs/maxHandoffs) * drain; took < floor {
		t.Errorf("handoffs took %v, less than %v: more than %d ran at once", took, floor, maxHandoffs)
	}
	tr.mu.Lock()
	peak := tr.maxDrain["a"]
	tr.mu.Unlock()
	if peak > maxHandoffs {
		t.Errorf("%d handoffs drained at once, want at most %d", peak, maxHandoffs)
	}
	tr.check(t, true)
}

// TestRuntimeShardChanges adds and removes shards on every member: the new
// ones get leaders, the removed ones stop (ErrShardRemoved) and their
// znodes are deleted.
func TestRuntimeShardChanges(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	var removedReasons atomic.Int64
	count := func(c *partition.Config) {
		stopped := tr.stopped(c.MemberID)
		c.OnStoppedLeading = func(shard string, reason error) {
			if errors.Is(reason, partition.ErrShardRemoved) {
				removedReasons.Add(1)
			}
			stopped(shard, reason)
		}
	}
	ms := []*member{startMember(t, root, "a", shards, tr, count), startMember(t, root, "b", shards, tr, count)}
	waitBalanced(t, shards, ms, 20*time.Second)
	next := partition.Range(10, 30)
	for _, mb := range ms {
		if err := mb.m.SetShards(next); err != nil {
			t.Fatalf("SetShards: %v", err)
		}
	}
	waitBalanced(t, next, ms, 20*time.Second)
	waitFor(t, 10*time.Second, "10 leaderships stopped with ErrShardRemoved", func() (bool, string) {
		n := removedReasons.Load()
		return n == 10, fmt.Sprintf("%d stopped", n)
	})
	waitFor(t, 10*time.Second, "removed shards' znodes deleted", func() (bool, string) {
		owners, err := partition.Owners(t.Context(), ms[0].sess, root) // every election, in its bucket
		if err != nil {
			return false, err.Error()
		}
		ids := slices.Sorted(maps.Keys(owners))
		want := slices.Sorted(slices.Values(next))
		return slices.Equal(ids, want), fmt.Sprintf("shard znodes %v", ids)
	})
	tr.check(t, true)
}

// TestOwnersReportsTheLeaders compares Owners with the members' own view.
func TestOwnersReportsTheLeaders(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 12)
	ms := []*member{startMember(t, root, "a", shards, tr), startMember(t, root, "b", shards, tr)}
	lead, _ := waitBalanced(t, shards, ms, 20*time.Second)
	owners, err := partition.Owners(t.Context(), ms[0].sess, root)
	if err != nil {
		t.Fatalf("Owners: %v", err)
	}
	tokens := map[string]zxidfence.Token{}
	for _, mb := range ms {
		maps.Copy(tokens, mb.m.Leaderships())
	}
	for _, s := range shards {
		if o := owners[s]; o.Member != lead[s] || o.Token != tokens[s] {
			t.Errorf("Owners()[%s] = %+v, want member %s token %v", s, o, lead[s], tokens[s])
		}
	}
	tr.check(t, true)
}

// TestConcurrentStartBalances starts three members at once on a fresh
// root: they converge on balanced leadership without any shard led twice.
func TestConcurrentStartBalances(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 90)
	var ms []*member
	for _, id := range []string{"a", "b", "c"} {
		ms = append(ms, startMember(t, root, id, shards, tr))
	}
	_, took := waitBalanced(t, shards, ms, 30*time.Second)
	t.Logf("3 members started together: balanced after %v", took)
	tr.check(t, true)
}

// TestHandoffTimeoutBoundsAStuckCallback: a leader whose OnStartedLeading
// ignores its cancelled context delays a handoff by HandoffTimeout, not
// forever; Run still waits for the callback before it returns.
func TestHandoffTimeoutBoundsAStuckCallback(t *testing.T) {
	const handoffTimeout = 300 * time.Millisecond
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 2)
	release := make(chan struct{})
	var started, returned atomic.Int64
	stuck := func(c *partition.Config) {
		c.HandoffTimeout = handoffTimeout
		c.OnStartedLeading = func(ctx context.Context, shard string, token zxidfence.Token) {
			started.Add(1)
			<-ctx.Done()
			<-release
			returned.Add(1)
		}
	}
	a := startMember(t, root, "a", shards, tr, stuck)
	waitFor(t, 10*time.Second, "a to lead both shards", func() (bool, string) {
		n := len(a.m.Leaderships())
		return n == 2, fmt.Sprintf("a leads %d", n)
	})
	start := time.Now()
	b := startMember(t, root, "b", shards, tr)
	waitFor(t, 10*time.Second, "b to take one shard over", func() (bool, string) {
		n := len(b.m.Leaderships())
		return n == 1, fmt.Sprintf("b leads %d", n)
	})
	if took := time.Since(start); took < handoffTimeout {
		t.Errorf("handoff took %v, less than HandoffTimeout %v: it did not wait for the callback", took, handoffTimeout)
	}
	runReturned := make(chan struct{})
	go func() { a.stop(t); close(runReturned) }()
	select {
	case <-runReturned:
		t.Fatal("Run returned while an OnStartedLeading call was still running")
	case <-time.After(2 * handoffTimeout):
	}
	close(release)
	<-runReturned
	// Every call Run made has returned (a loaded machine may have a lead a
	// shard more than twice: a suspended session ends a leadership too).
	if n, m := returned.Load(), started.Load(); n != m || n < 2 {
		t.Errorf("%d of %d callbacks returned when Run did, want all, at least 2", n, m)
	}
}

// TestPartitionedMemberGetsItsShardsBack cuts one member off (its traffic
// blackholed) until its session expires: the others lead its shards
// meanwhile, the guard refuses its stale writes, and once it reconnects
// within its restart grace it leads the same shards again with new tokens,
// while the others' shards never move.
func TestPartitionedMemberGetsItsShardsBack(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	grace := func(c *partition.Config) { c.RestartGrace = 20 * time.Second }
	proxy := zkc.NewProxyT(t)
	a := startMember(t, root, "a", shards, tr, grace)
	b := startMember(t, root, "b", shards, tr, grace)
	c := startMemberOn(t, connectTo(t, proxy.Addrs(), sessionTimeout), root, "c", shards, tr, grace)
	before, _ := waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	old := c.m.Leaderships()
	proxy.Blackhole()
	took := waitFor(t, 20*time.Second, "a and b to lead c's shards", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		return len(lead) == len(shards), fmt.Sprintf("%d/%d led by a and b", len(lead), len(shards))
	})
	t.Logf("c cut off: its shards led by a and b after %v (session timeout %v)", took, sessionTimeout)
	for s, m := range leaders(t, []*member{a, b}) {
		if before[s] != "c" && before[s] != m {
			t.Errorf("shard %s of %s moved to %s while c was cut off", s, before[s], m)
		}
	}
	proxy.Heal()
	after, _ := waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	if n := moved(before, after); n != 0 {
		t.Errorf("%d shards differ from before the partition, want 0", n)
	}
	for s, tok := range c.m.Leaderships() {
		if tok <= old[s] {
			t.Errorf("shard %s: token %v after the partition, not above %v", s, tok, old[s])
		}
	}
	tr.check(t, false)
}

// TestGoroutinesPerShardStayBounded: a member leading many shards costs a
// small constant number of goroutines per shard (its runner and its
// candidate's event loop, plus OnStartedLeading while it runs), and gives
// them all back when it stops.
func TestGoroutinesPerShardStayBounded(t *testing.T) {
	const n = 500
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, n)
	sess := connect(t, sessionTimeout)
	before := runtime.NumGoroutine()
	idle := func(c *partition.Config) {
		c.OnStartedLeading = nil // no per-leadership work goroutine: count the manager's own
	}
	a := startMemberOn(t, sess, root, "a", shards, tr, idle)
	waitBalanced(t, shards, []*member{a}, 30*time.Second)
	perShard := float64(runtime.NumGoroutine()-before) / n
	t.Logf("%.2f goroutines per shard", perShard)
	if perShard > 2.5 {
		t.Errorf("%.2f goroutines per shard, want at most 2.5", perShard)
	}
	a.stop(t)
	waitFor(t, 10*time.Second, "the member's goroutines to end", func() (bool, string) {
		g := runtime.NumGoroutine()
		return g <= before+5, fmt.Sprintf("%d goroutines, %d before", g, before)
	})
}

// TestHandoffWaitsForACampaigningSuccessor registers a member that never
// campaigns (a wedged process whose session is alive): the shards assigned
// to it are not resigned into the void; their leader keeps them until the
// successor campaigns, and gives them up when it is gone.
func TestHandoffWaitsForACampaigningSuccessor(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 12)
	a := startMember(t, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	ghost := connect(t, sessionTimeout)
	if _, err := ghost.Conn().Create(root+"/members/ghost", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("register ghost member: %v", err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(10 * settleWindow); time.Now().Before(end); <-tick.C {
		if n := len(a.m.Leaderships()); n != len(shards) {
			t.Fatalf("a leads %d of %d shards after a member that never campaigns registered", n, len(shards))
		}
	}
	b := startMember(t, root, "b", shards, tr)
	if err := ghost.Conn().Delete(root+"/members/ghost", -1); err != nil {
		t.Fatalf("unregister ghost: %v", err)
	}
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	tr.check(t, true)
}

// settleWindow is longer than the manager's settle delay before a handoff.
const settleWindow = 250 * time.Millisecond

// TestStopWhileCutOffReturnsPromptly: a member cut off from the ensemble
// whose Run is cancelled returns within a few session timeouts. It once
// waited the library's default close timeout twice per candidate (over 20s)
// to confirm deletions that the session's end makes anyway.
func TestStopWhileCutOffReturnsPromptly(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 4)
	proxy := zkc.NewProxyT(t)
	m := startMemberOn(t, connectTo(t, proxy.Addrs(), sessionTimeout), root, "cut", shards, tr)
	waitBalanced(t, shards, []*member{m}, 20*time.Second)
	proxy.Blackhole()
	start := time.Now()
	m.stop(t)
	took := time.Since(start)
	t.Logf("cut-off member stopped in %v (session timeout %v)", took, sessionTimeout)
	if bound := 10 * sessionTimeout; took > bound {
		t.Errorf("Run returned %v after its ctx was cancelled while cut off, want within %v", took, bound)
	}
}
