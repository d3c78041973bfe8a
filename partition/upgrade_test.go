package partition_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// oldMember starts a member that names its candidates as releases before
// recipe.ShortNaming did, and creates a missing root flat as releases
// before buckets did.
func oldMember(t *testing.T, root, id string, shards []string, tr *tracker, tune ...func(*partition.Config)) *member {
	t.Helper()
	mb := newFlatMember(t, root, id, shards, tr, tune...)
	partition.UseCuratorNaming(mb.m)
	mb.run(t)
	return mb
}

// candidateNames counts the shards' candidate znodes under root by naming:
// Curator LeaderLatch's ("_c_<uuid>-latch-<seq>") and the short one.
func candidateNames(t *testing.T, mb *member, root string, shards []string) (latch, short int) {
	t.Helper()
	for _, s := range shards {
		names, _, err := mb.sess.Conn().Children(electionOf(t, mb.sess, root, s))
		if err != nil {
			t.Fatalf("list shard %s: %v", s, err)
		}
		for _, n := range names {
			switch {
			case strings.Contains(n, "-latch-"):
				latch++
			case strings.HasPrefix(n, "_c_") && len(n) == 38:
				short++
			default:
				t.Fatalf("shard %s: candidate %q has neither naming", s, n)
			}
		}
	}
	return latch, short
}

// TestRollingUpgradeToShortCandidateNames: a fleet of two members of the
// release that named shard candidates like Curator's LeaderLatch is
// upgraded one member at a time to short names. While both namings share
// the elections, the shards are balanced, handed between members of both
// releases (each comes back within its restart grace and gets its shards
// back from the other), and no two leaders overlap.
func TestRollingUpgradeToShortCandidateNames(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	grace := func(c *partition.Config) { c.RestartGrace = 20 * time.Second }
	a, b := oldMember(t, root, "a", shards, tr, grace), oldMember(t, root, "b", shards, tr, grace)
	before, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	if latch, short := candidateNames(t, a, root, shards); latch != len(shards) || short != 0 {
		t.Fatalf("old fleet: %d LeaderLatch and %d short names, want %d and 0", latch, short, len(shards))
	}

	a.stop(t)
	a = startMember(t, root, "a", shards, tr, grace)
	mixed, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	if n := moved(before, mixed); n != 0 {
		t.Errorf("%d shards moved when a came back upgraded, want 0 (its restart grace)", n)
	}
	waitFor(t, 10*time.Second, "both namings in the elections", func() (bool, string) {
		latch, short := candidateNames(t, a, root, shards)
		return latch == len(shards)/2 && short == len(shards)/2, fmt.Sprintf("%d LeaderLatch, %d short", latch, short)
	})

	b.stop(t)
	b = startMember(t, root, "b", shards, tr, grace)
	after, _ := waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	if n := moved(before, after); n != 0 {
		t.Errorf("%d shards moved over the upgrade, want 0", n)
	}
	waitFor(t, 10*time.Second, "short names only", func() (bool, string) {
		latch, short := candidateNames(t, a, root, shards)
		return latch == 0 && short == len(shards), fmt.Sprintf("%d LeaderLatch, %d short", latch, short)
	})
	tr.check(t, false)
}
