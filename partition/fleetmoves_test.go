package partition_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// fleetShards is the size of the fleet-scale moves test: large enough that
// a joiner's thousands of candidates start over seconds, not at once.
const fleetShards = 3000

// TestJoinStopDrainMoveEachShardOnce runs three members over 3,000 shards,
// every leader writing through the tracker's fenced guard, and moves them
// three ways, each until balanced: a fourth member joins (exactly the
// shards it leads then move, each to it), it stops gracefully (exactly its
// shards move, back to the three), and one of the three is drained
// (exactly its shards move). Every move is one graceful handoff (no two
// leaderships of a shard overlap, no stale write accepted), and a handoff
// whose successor's candidate is not in the election yet waits for it
// instead of being given back: before, a join gave back hundreds of
// handoffs (handoffs_deferred_total), each asked again only after the
// settle delay and the loop's next step.
func TestJoinStopDrainMoveEachShardOnce(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, fleetShards)
	tr.every = time.Second // 3,000 leaders writing every 20ms would starve the sessions under -race
	regs, ends := map[string]*prometheus.Registry{}, &stopReasons{n: map[string]int{}}
	start := func(id string) *member {
		regs[id] = prometheus.NewRegistry()
		// 2s sessions (the server's longest): thousands of elections per
		// member on a loaded machine must not lose a connection.
		return startMemberOn(t, connect(t, 2*time.Second), root, id, shards, tr, noGrace, ends.tune(tr, id),
			func(c *partition.Config) { c.Metrics = regs[id] })
	}
	ms := []*member{start("a"), start("b"), start("c")}
	before, _ := waitBalanced(t, shards, ms, 60*time.Second)
	// The join starts once the records say what the leaders do: a record
	// still showing part of a cold start (230 of a member's 1,000) gives
	// that member room, the joiner's shards are dealt to it until the
	// record catches up, and those handoffs are given back on the way.
	waitRecordsShow(t, ms[0].sess, root, before)

	ends0 := ends.snapshot()
	d := start("d")
	afterJoin, took := waitBalanced(t, shards, append(ms, d), 60*time.Second)
	checkMoves(t, "join", before, afterJoin, func(from, to string) bool { return to == "d" })
	ends.check(t, "join", ends0, map[string]int{"a/handoff": -1, "b/handoff": -1, "c/handoff": -1}, moved(before, afterJoin))
	deferred := deferredHandoffs(t, regs)
	t.Logf("join: %d moves, balanced after %v, %d handoffs given back", moved(before, afterJoin), took, deferred)
	// A handoff given back is one whose successor's candidate was not seen
	// in the election within HandoffTimeout, or whose target changed
	// meanwhile: with the records lagging the leaders at the join's start
	// (not waited for) 26 to 117 of the joiner's 750 were, on 2 loaded
	// cores under -race, their targets moving from d to a member whose
	// record showed room and back; with the records waited for, none in
	// eight runs. Handing off before the candidate came gave back hundreds.
	if limit := fleetShards / 100; deferred > limit {
		t.Errorf("the join gave back %d handoffs (handoffs_deferred_total), want at most %d: a handoff waits for its successor's candidate", deferred, limit)
	}

	stopStart, ends0 := time.Now(), ends.snapshot()
	d.stop(t)
	afterStop, _ := waitBalanced(t, shards, ms, 60*time.Second)
	checkMoves(t, "graceful stop", afterJoin, afterStop, func(from, to string) bool { return from == "d" })
	ends.check(t, "graceful stop", ends0, map[string]int{"d/stopping": -1}, moved(afterJoin, afterStop))
	t.Logf("graceful stop: %d moves, balanced after %v", moved(afterJoin, afterStop), time.Since(stopStart))

	op := newOperator(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	drainStart, ends0 := time.Now(), ends.snapshot()
	if _, err := op.Drain(ctx, "c", "test"); err != nil {
		t.Fatalf("Drain(c): %v", err)
	}
	if err := op.WaitDrained(ctx, "c"); err != nil {
		t.Fatalf("WaitDrained(c): %v", err)
	}
	afterDrain, _ := waitBalanced(t, shards, ms[:2], 60*time.Second)
	checkMoves(t, "drain", afterStop, afterDrain, func(from, to string) bool { return from == "c" })
	ends.check(t, "drain", ends0, map[string]int{"c/handoff": -1}, moved(afterStop, afterDrain))
	t.Logf("drain: %d moves, balanced after %v", moved(afterStop, afterDrain), time.Since(drainStart))
	tr.check(t, true)
}

// checkMoves fails the test for a shard that moved between the
// snapshots although allowed(from, to) says it must not.
func checkMoves(t *testing.T, step string, before, after map[string]string, allowed func(from, to string) bool) {
	t.Helper()
	bad := 0
	for s, to := range after {
		if from := before[s]; from != to && !allowed(from, to) {
			if bad++; bad <= 5 {
				t.Errorf("%s: shard %s moved from %s to %s", step, s, from, to)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d wrong moves in all", step, bad)
	}
}

// stopReasons counts the members' OnStoppedLeading calls by member and
// reason ("a/handoff", "d/stopping", "b/lost" ...), beside the tracker's
// own bookkeeping.
type stopReasons struct {
	mu   sync.Mutex
	n    map[string]int
	seen map[string]string // a reason of each key, to name in a failure
}

func (sr *stopReasons) tune(tr *tracker, id string) func(*partition.Config) {
	return func(c *partition.Config) {
		c.OnStoppedLeading = func(shard string, reason error) {
			key := id + "/lost"
			switch {
			case errors.Is(reason, partition.ErrHandoff):
				key = id + "/handoff"
			case errors.Is(reason, partition.ErrWithdrawn):
				key = id + "/withdrawn"
			case errors.Is(reason, partition.ErrStopping):
				key = id + "/stopping"
			case errors.Is(reason, recipe.ErrSuspended), errors.Is(reason, recipe.ErrSessionExpired):
				key = id + "/suspended"
			}
			sr.mu.Lock()
			sr.n[key]++
			if sr.seen == nil {
				sr.seen = map[string]string{}
			}
			if _, ok := sr.seen[key]; !ok && reason != nil {
				sr.seen[key] = reason.Error()
			}
			sr.mu.Unlock()
			tr.stopped(id)(shard, reason)
		}
	}
}

func (sr *stopReasons) snapshot() map[string]int {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return maps.Clone(sr.n)
}

// check fails the test unless the leaderships ended during a step (since
// the snapshot before) are exactly those of want: the keys with -1
// together ended moves times (each moved shard let go once, never handed
// over and back), and no leadership ended otherwise (a connection lost,
// a withdrawal, a handoff by a member that had to keep its shards).
func (sr *stopReasons) check(t *testing.T, step string, before, want map[string]int, moves int) {
	t.Helper()
	delta, ok := map[string]int{}, 0
	for k, n := range sr.snapshot() {
		if d := n - before[k]; d != 0 {
			delta[k] = d
			if want[k] == -1 {
				ok += d
			}
		}
	}
	bad, suspended := ok != moves, false
	for k := range delta {
		if strings.HasSuffix(k, "/suspended") {
			suspended = true
		}
		if want[k] != -1 {
			bad = true
		}
	}
	if bad && suspended {
		// A session of 2 s suspended by a starved machine (a clean-clone
		// run of the whole suite once ended 255 of the joiner's new
		// leaderships so) ends leaderships no handoff did: the exact
		// count cannot hold then, and the tracker's overlap and stale-write
		// checks still do.
		t.Logf("%s: leaderships ended %v, with a session suspended: not counted", step, delta)
		return
	}
	if bad {
		sr.mu.Lock()
		seen := maps.Clone(sr.seen)
		sr.mu.Unlock()
		t.Errorf("%s: leaderships ended %v, want %d in all of %v (one for each move) and no other; reasons seen: %v",
			step, delta, moves, slices.Sorted(maps.Keys(want)), seen)
	}
}

// deferredHandoffs sums handoffs_deferred_total over the members'
// registries.
func deferredHandoffs(t *testing.T, regs map[string]*prometheus.Registry) int {
	t.Helper()
	total := 0
	for id, reg := range regs {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("gather %s's metrics: %v", id, err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "zkelect_partition_handoffs_deferred_total" {
				for _, m := range mf.GetMetric() {
					total += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return total
}

// waitRecordsShow waits until every member's record (<root>/owners/<id>)
// leads exactly the shards want gives it, read on sess.
func waitRecordsShow(t *testing.T, sess *recipe.Session, root string, want map[string]string) {
	t.Helper()
	per := map[string]int{}
	for _, m := range want {
		per[m]++
	}
	waitFor(t, 30*time.Second, "the records to show the leaders", func() (bool, string) {
		for id, n := range per {
			rec := readRecord(t, sess, root, id)
			for s := range rec.Leading {
				if want[s] != id {
					return false, fmt.Sprintf("%s's record leads %s, led by %s", id, s, want[s])
				}
			}
			if len(rec.Leading) != n {
				return false, fmt.Sprintf("%s's record leads %d of its %d", id, len(rec.Leading), n)
			}
		}
		return true, ""
	})
}
