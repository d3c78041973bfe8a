package recipe_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/zkelect/zkelect/recipe"
)

// TestLeadersOfASessionShareOneLeaseCheck: every leadership on a session
// has its local lease checked by the session's one timer, none by a timer
// of its own (thousands of shard leaderships on a partition member), and
// a leadership that ends is no longer checked; the last one's end stops
// the timer. (A dropped connection ends leaderships for a while: the
// counts are awaited, not read once.)
func TestLeadersOfASessionShareOneLeaseCheck(t *testing.T) {
	s := session(t, zkc.ConnectString())
	const n = 5
	cands := make([]*recipe.Candidate, 0, n)
	for range n {
		c := candidate(t, s, electionPath(t))
		lead(t, c)
		cands = append(cands, c)
	}
	guarded := func(want int) func() bool {
		return func() bool {
			got, armed := recipe.GuardedLeases(s)
			return got == want && armed == (want > 0)
		}
	}
	eventually(t, "the session to check all 5 leaderships' leases on its armed timer", guarded(n))
	for i, c := range cands {
		if err := c.Close(); err != nil && !errors.Is(err, recipe.ErrCleanupIncomplete) {
			t.Fatalf("close: %v", err)
		}
		eventually(t, fmt.Sprintf("the session to check %d leases after %d of %d leaders closed", n-i-1, i+1, n), guarded(n-i-1))
	}
}

// TestCandidateFitsItsSizeClass: a partition member holds one Candidate
// per shard, allocated in Go's 512-byte size class; a field that pushes
// it past costs every shard 64 bytes more (the next class is 576).
func TestCandidateFitsItsSizeClass(t *testing.T) {
	if recipe.CandidateSize > 512 {
		t.Fatalf("Candidate is %d bytes, over the 512-byte size class", recipe.CandidateSize)
	}
}
