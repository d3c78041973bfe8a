package partition_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
)

// TestEnsembleMovedToNewPortsMovesNoShard moves every member of a 3-server
// ensemble started with dynamic configuration to servers on new ports, one
// at a time with real reconfigs (a new server joins, an old one leaves and
// is killed), under 3 partition members leading 1,000 shards. The members
// follow /zookeeper/config: every session survives (same ids), and no
// shard moves. Without following the configuration the members dialled
// only the killed servers and lost their sessions.
func TestEnsembleMovedToNewPortsMovesNoShard(t *testing.T) {
	const n = 1000
	c := testenv.New(t, testenv.Options{Servers: 3, SpareServers: 3, DynamicConfig: true, MaxSessionTimeout: 6 * time.Second})
	seed := c.Addrs()[:3]
	mc := &moveCounter{first: map[string]string{}, reasons: map[string]int{}}
	root, shards := newRoot(t), partition.Range(0, n)
	var ms []*member
	for _, id := range []string{"m1", "m2", "m3"} {
		ms = append(ms, startMemberOn(t, connectTo(t, seed, 6*time.Second), root, id, shards, newTracker(),
			func(cfg *partition.Config) {
				cfg.OnStartedLeading, cfg.OnStoppedLeading = mc.started(id), mc.stopped
			}))
	}
	waitBalanced(t, shards, ms, 60*time.Second)
	waitFor(t, 30*time.Second, "the first balance to settle (every assignment matching the leaders)", func() (bool, string) {
		lead := leaders(t, ms)
		for _, s := range shards {
			for _, mb := range ms {
				to := partition.TargetOf(mb.m, s) // a member keeps the part of the assignment concerning it
				if (to == mb.id) != (lead[s] == mb.id) || to != "" && to != lead[s] {
					return false, fmt.Sprintf("%s assigns shard %s to %q, led by %s", mb.id, s, to, lead[s])
				}
			}
		}
		return true, ""
	})
	mc.mu.Lock()
	for s, m := range leaders(t, ms) {
		mc.first[s] = m
	}
	mc.moves, mc.handoffs, mc.reasons = nil, 0, map[string]int{}
	mc.mu.Unlock()
	ids := map[string]int64{}
	for _, mb := range ms {
		ids[mb.id] = mb.sess.ID()
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	for i := range 3 {
		if err := c.Join(ctx, 3+i); err != nil {
			t.Fatalf("move %d: join server %d: %v", i, 3+i, err)
		}
		if err := c.Reconfig(ctx, nil, []int{i}); err != nil {
			t.Fatalf("move %d: remove server %d: %v", i, i, err)
		}
		if err := c.Kill(i); err != nil {
			t.Fatalf("move %d: kill server %d: %v", i, i, err)
		}
		waitBalanced(t, shards, ms, 30*time.Second)
	}
	t.Logf("ensemble moved to %v in %v; members %v", c.Addrs()[3:], time.Since(start).Round(time.Millisecond), c.Members())
	for _, mb := range ms {
		waitFor(t, 30*time.Second, mb.id+"'s session connected on the new servers", func() (bool, string) {
			return mb.sess.Connected() && mb.sess.ID() == ids[mb.id], fmt.Sprintf("session %#x, connected %v", mb.sess.ID(), mb.sess.Connected())
		})
	}
	moves, handoffs := mc.snapshot()
	mc.mu.Lock()
	t.Logf("leaderships ended, by reason: %v", mc.reasons)
	mc.mu.Unlock()
	if len(moves) > 0 || handoffs > 0 {
		t.Errorf("moving the ensemble moved %d of %d shards (%d handoffs); want none: %v", len(moves), n, handoffs, moves)
	}
}
