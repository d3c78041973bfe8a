package partition_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
)

// TestPruneRemovesElectionsNoLiveMemberRuns: a member started by mistake
// with 16 shards beside one with 8 leaves elections 8-15; Prune refuses
// while it runs, and once it is gone deletes exactly those, leaving the
// live member's shards led.
func TestPruneRemovesElectionsNoLiveMemberRuns(t *testing.T) {
	tr, root := newTracker(), newRoot(t)
	eight, sixteen := partition.Range(0, 8), partition.Range(0, 16)
	a := startMember(t, root, "a", eight, tr)
	b := startMember(t, root, "b", sixteen, tr)
	sess := connect(t, sessionTimeout)
	waitFor(t, 30*time.Second, "16 elections, shards 8-15 led by b", func() (bool, string) {
		o, err := partition.Owners(t.Context(), sess, root)
		if err != nil {
			return false, err.Error()
		}
		return len(o) == 16 && o["15"].Member == "b", ""
	})
	if _, _, err := operator.Prune(t.Context(), sess, root, eight, false); !errors.Is(err, operator.ErrPruneRefused) {
		t.Fatalf("Prune while b runs 16 shards: %v, want ErrPruneRefused", err)
	}
	b.stop(t)
	waitBalanced(t, eight, []*member{a}, 30*time.Second)
	want := partition.Range(8, 16)
	slices.Sort(want)
	// The observer's session may lose its connection on a loaded machine:
	// a dry run is read-only, so it is asked again until it answers.
	waitFor(t, 10*time.Second, "a dry run naming shards 8-15", func() (bool, string) {
		dry, _, err := operator.Prune(t.Context(), sess, root, eight, true)
		return err == nil && slices.Equal(dry, want), fmt.Sprintf("%v, %v", dry, err)
	})
	if o, _ := partition.Owners(t.Context(), sess, root); len(o) != 16 {
		t.Fatalf("the dry run left %d elections, want 16", len(o))
	}
	// Asked again if the observer's connection drops mid-way: what one
	// attempt deleted, the next no longer finds.
	var deleted, kept []string
	waitFor(t, 10*time.Second, "Prune to finish", func() (bool, string) {
		d, k, err := operator.Prune(t.Context(), sess, root, eight, false)
		deleted, kept = append(deleted, d...), k
		return err == nil, fmt.Sprint(err)
	})
	slices.Sort(deleted)
	if !slices.Equal(slices.Compact(deleted), want) || len(kept) != 0 {
		t.Errorf("deleted %v, kept %v; want %v deleted", deleted, kept, want)
	}
	o, err := partition.Owners(t.Context(), sess, root)
	if err != nil || len(o) != 8 {
		t.Fatalf("after Prune %d elections (%v), want 8", len(o), err)
	}
	waitBalanced(t, eight, []*member{a}, 10*time.Second)
}
