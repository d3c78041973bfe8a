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
	root, shards := newRoot(t), partition.Range(0, n)
	mc, ms := settledMembers(t, seed, root, shards)
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
