package partition_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// moveCounter counts leaderships started on a member other than the
// shard's first leader, and handoffs.
type moveCounter struct {
	mu       sync.Mutex
	first    map[string]string // shard → its first leader
	moves    []string
	handoffs int
	reasons  map[string]int
}

func (mc *moveCounter) started(member string) func(context.Context, string, zxidfence.Token) {
	return func(ctx context.Context, shard string, _ zxidfence.Token) {
		mc.mu.Lock()
		switch f, ok := mc.first[shard]; {
		case !ok:
			mc.first[shard] = member
		case f != member:
			mc.moves = append(mc.moves, fmt.Sprintf("%s: %s→%s", shard, f, member))
		}
		mc.mu.Unlock()
		<-ctx.Done()
	}
}

func (mc *moveCounter) stopped(_ string, reason error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	mc.reasons[fmt.Sprint(reason)]++
	if errors.Is(reason, partition.ErrHandoff) {
		mc.handoffs++
	}
}

func (mc *moveCounter) snapshot() ([]string, int) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return append([]string(nil), mc.moves...), mc.handoffs
}

// TestQuorumLeaderFailoverMovesNoShard kills the quorum leader of a
// 3-server ensemble under 3 members and 1,000 shards, and restarts it,
// several times. Every member's session survives each failover, so no shard
// may move: every shard is led again by the member that led it before.
func TestQuorumLeaderFailoverMovesNoShard(t *testing.T) {
	const n, faults = 1000, 3
	// Sessions of 6s outlive a quorum-leader election (a few ticks) and
	// the reconnect to a surviving server.
	c := testenv.New(t, testenv.Options{Servers: 3, MaxSessionTimeout: 6 * time.Second})
	root, shards := newRoot(t), partition.Range(0, n)
	mc, ms := settledMembers(t, c.Addrs(), root, shards)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	for i := range faults {
		ql, err := c.QuorumLeader(ctx)
		if err != nil {
			t.Fatalf("fault %d: find the quorum leader: %v", i, err)
		}
		if err := c.Kill(ql); err != nil {
			t.Fatalf("fault %d: kill server %d: %v", i, ql, err)
		}
		if _, err := c.WaitQuorumLeader(ctx, ql); err != nil {
			t.Fatalf("fault %d: a new quorum leader: %v", i, err)
		}
		waitBalanced(t, shards, ms, 30*time.Second)
		if err := c.Restart(ctx, ql); err != nil {
			t.Fatalf("fault %d: restart server %d: %v", i, ql, err)
		}
		waitBalanced(t, shards, ms, 30*time.Second)
	}
	moves, handoffs := mc.snapshot() // before the members stop and hand their shards to each other
	mc.mu.Lock()
	t.Logf("leaderships ended, by reason: %v", mc.reasons)
	mc.mu.Unlock()
	if len(moves) > 0 || handoffs > 0 {
		t.Errorf("%d quorum-leader failovers moved %d shards (%d handoffs); want none: %v", faults, len(moves), handoffs, moves)
	}
}

// waitSettled waits until every member's assignment agrees with who leads
// each shard. A member keeps the part of the assignment concerning it (the
// shards it is given and those it runs): each must give itself exactly the
// shards it leads, and any other shard it knows of to that shard's leader.
func waitSettled(t *testing.T, shards []string, ms []*member) {
	t.Helper()
	waitFor(t, 30*time.Second, "the first balance to settle (every assignment matching the leaders)", func() (bool, string) {
		lead := leaders(t, ms)
		if ok, desc := balanced(shards, lead, len(ms)); !ok {
			return false, desc
		}
		for _, s := range shards {
			for _, mb := range ms {
				to := partition.TargetOf(mb.m, s)
				if (to == mb.id) != (lead[s] == mb.id) || to != "" && to != lead[s] {
					return false, fmt.Sprintf("%s assigns shard %s to %q, led by %s", mb.id, s, to, lead[s])
				}
			}
		}
		return true, ""
	})
}

// settledMembers starts members m1, m2 and m3 on sessions of 6s to addrs,
// leading shards under root, waits until they are balanced and settled,
// and returns them with a moveCounter that counts from then on.
func settledMembers(t *testing.T, addrs []string, root string, shards []string) (*moveCounter, []*member) {
	t.Helper()
	mc := &moveCounter{first: map[string]string{}, reasons: map[string]int{}}
	var ms []*member
	for _, id := range []string{"m1", "m2", "m3"} {
		ms = append(ms, startMemberOn(t, connectTo(t, addrs, 6*time.Second), root, id, shards, newTracker(),
			func(cfg *partition.Config) {
				cfg.OnStartedLeading, cfg.OnStoppedLeading = mc.started(id), mc.stopped
			}))
	}
	waitBalanced(t, shards, ms, 60*time.Second)
	waitSettled(t, shards, ms) // moves while the first balance settles are not the test's
	mc.mu.Lock()
	for s, m := range leaders(t, ms) {
		mc.first[s] = m
	}
	mc.moves, mc.handoffs, mc.reasons = nil, 0, map[string]int{}
	mc.mu.Unlock()
	return mc, ms
}
