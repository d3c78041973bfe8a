package partition_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zxidfence"
)

// startCounter counts OnStartedLeading calls per shard.
type startCounter struct {
	mu     sync.Mutex
	starts map[string]int
}

// wrap returns f counting its calls.
func (c *startCounter) wrap(f func(context.Context, string, zxidfence.Token)) func(context.Context, string, zxidfence.Token) {
	return func(ctx context.Context, shard string, token zxidfence.Token) {
		c.mu.Lock()
		c.starts[shard]++
		c.mu.Unlock()
		f(ctx, shard, token)
	}
}

// take returns the counts so far and starts counting from zero.
func (c *startCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.starts
	c.starts = map[string]int{}
	return out
}

// waitPublished waits until the record of every member (the data of
// <root>/owners/<member>, JSON while small) lists the shards it leads, so
// that the others compute the assignment from the state the test sees.
func waitPublished(t *testing.T, root string, ms []*member) {
	t.Helper()
	conn := ms[0].sess.Conn()
	waitFor(t, 10*time.Second, "the members' records to list their leaderships", func() (bool, string) {
		for _, mb := range ms {
			data, _, err := conn.Get(root + "/owners/" + mb.id)
			if err != nil {
				return false, fmt.Sprintf("record of %s: %v", mb.id, err)
			}
			var rec struct {
				Leading map[string]uint64 `json:"leading"`
			}
			if err := json.Unmarshal(data, &rec); err != nil {
				return false, fmt.Sprintf("record of %s: %v", mb.id, err)
			}
			led := mb.m.Leaderships()
			if len(rec.Leading) != len(led) {
				return false, fmt.Sprintf("record of %s lists %d shards, it leads %d", mb.id, len(rec.Leading), len(led))
			}
			for s, tok := range led {
				if rec.Leading[s] != uint64(tok) {
					return false, fmt.Sprintf("record of %s: shard %s token %d, leads it with %d", mb.id, s, rec.Leading[s], tok)
				}
			}
		}
		return true, ""
	})
}

// quietWindow is how long a test watches leaderships to see that nothing
// moves: longer than the manager's longest settle delay (2s) before a
// handoff.
const quietWindow = 3 * time.Second

// TestGracefulLeaveMovesEachShardOnce stops one of three members with a
// short restart grace: each of its shards is led once by one of the others
// (balanced from the start), no other shard moves, and when the grace ends
// (its record deleted) nothing moves again.
func TestGracefulLeaveMovesEachShardOnce(t *testing.T) {
	const grace = time.Second
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	counter := &startCounter{starts: map[string]int{}}
	tune := func(c *partition.Config) {
		c.RestartGrace = grace
		c.OnStartedLeading = counter.wrap(tr.started(c.MemberID, 0))
	}
	a := startMember(t, root, "a", shards, tr, tune)
	b := startMember(t, root, "b", shards, tr, tune)
	c := startMember(t, root, "c", shards, tr, tune)
	before, _ := waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	waitPublished(t, root, []*member{a, b, c})
	counter.take()
	c.stop(t)
	during, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	conn := a.sess.Conn()
	waitFor(t, 20*grace, "c's record to be deleted after its grace", func() (bool, string) {
		ok, _, err := conn.Exists(root + "/owners/c")
		return err == nil && !ok, fmt.Sprintf("exists %v, err %v", ok, err)
	})
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(quietWindow); time.Now().Before(end); <-tick.C {
		if now := leaders(t, []*member{a, b}); !maps.Equal(now, during) {
			t.Fatalf("%d shards moved after c's grace ended", moved(during, now))
		}
	}
	starts := counter.take()
	for _, s := range shards {
		want := 0
		if before[s] == "c" {
			want = 1
		}
		if starts[s] != want {
			t.Errorf("shard %s (led by %s before c left): %d leaderships started since, want %d", s, before[s], starts[s], want)
		}
	}
	tr.check(t, true)
}
