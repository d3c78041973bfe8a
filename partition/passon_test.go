package partition_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestCandidateWinningAnUnassignedShardPassesItOn puts member a's candidate
// first in the queue of shard x although x is assigned to member b (a ghost
// leads x meanwhile, a queues behind it, then b): when the ghost goes, a
// wins x and resigns before any callback runs (no OnStartedLeading, no
// write through its guard, passed_on_total counts it), and b leads x.
func TestCandidateWinningAnUnassignedShardPassesItOn(t *testing.T) {
	const x = "x"
	tr, root := newTracker(), newRoot(t)
	observer := connect(t, sessionTimeout)
	if err := partition.EnsureRoot(t.Context(), observer, root); err != nil {
		t.Fatalf("create root: %v", err)
	}
	election := electionOf(t, observer, root, x)
	ghost, err := recipe.NewCandidate(observer, election, recipe.WithParticipantID("ghost"))
	if err != nil {
		t.Fatalf("ghost candidate: %v", err)
	}
	defer ghost.Close()
	if _, err := ghost.Campaign(t.Context()); err != nil {
		t.Fatalf("ghost campaign: %v", err)
	}

	reg, guard := prometheus.NewRegistry(), zxidfence.NewMemory()
	var callbacks atomic.Int64
	a, err := partition.NewManager(connect(t, sessionTimeout), root, partition.Config{
		MemberID: "a", Shards: []string{x}, Metrics: reg, Logger: testLogger(t, "a"),
		OnStartedLeading: func(ctx context.Context, shard string, token zxidfence.Token) {
			callbacks.Add(1)
			_ = guard.Do(ctx, shard, zxidfence.At(token), nil)
		},
		OnStoppedLeading: func(string, error) { callbacks.Add(1) },
	})
	if err != nil {
		t.Fatalf("NewManager(a): %v", err)
	}
	done, stop := partition.CampaignUnassigned(a, x, "b")
	defer func() { stop(); <-done }()
	waitQueue(t, observer, election, "ghost", "a")
	b := startMember(t, root, "b", []string{x}, tr)
	waitQueue(t, observer, election, "ghost", "a", "b")

	if err := ghost.Close(); err != nil {
		t.Fatalf("ghost close: %v", err)
	}
	waitFor(t, 10*time.Second, "b to lead x (or a's callbacks to run)", func() (bool, string) {
		_, ok := b.m.Leaderships()[x]
		return ok || callbacks.Load() > 0, fmt.Sprintf("b leads %v", b.m.Leaderships())
	})
	if n := callbacks.Load(); n != 0 {
		t.Fatalf("a's callbacks ran %d times for a shard assigned to b, want 0", n)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a's runner still runs 10s after b took x over")
	}
	if n := callbacks.Load(); n != 0 {
		t.Errorf("a's callbacks ran %d times after passing x on, want 0", n)
	}
	if f, err := guard.Highest(t.Context(), x); err != nil || f != (zxidfence.Fence{}) {
		t.Errorf("a's guard saw a write for x: highest %+v, err %v", f, err)
	}
	if n := counterValue(t, reg, "zkelect_partition_passed_on_total"); n != 1 {
		t.Errorf("zkelect_partition_passed_on_total = %v, want 1", n)
	}
	tr.check(t, true)
}

// waitQueue waits until the candidates of election, leader first, are ids.
func waitQueue(t *testing.T, sess *recipe.Session, election string, ids ...string) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("candidates %v in %s", ids, election), func() (bool, string) {
		ps, err := recipe.Participants(t.Context(), sess, election)
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.ID)
		}
		return slices.Equal(got, ids), fmt.Sprintf("candidates %v", got)
	})
}

// counterValue sums the counter family name of reg.
func counterValue(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
