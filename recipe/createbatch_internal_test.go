package recipe

import (
	"fmt"
	"testing"

	"github.com/zkelect/zkelect/internal/zkconn"
)

// TestCreateBatchHoldsOneCreatePerElection: znodes created in one multi
// share its zxid (the fencing token), so a batch takes at most one create
// of each election and at most maxCreateBatch creates; the rest wait, in
// order, for the next batch.
func TestCreateBatchHoldsOneCreatePerElection(t *testing.T) {
	var b createBatcher
	b.senders = 1
	for i := range maxCreateBatch + 10 {
		for range 2 { // two candidates of each election
			b.queue = append(b.queue, &createJob{op: &zkconn.Create2Request{Path: fmt.Sprintf("/e%d/_c_x-latch-", i)}})
		}
	}
	total := len(b.queue)
	seen := 0
	for batch := b.take(); len(batch) > 0; batch = b.take() {
		if len(batch) > maxCreateBatch {
			t.Fatalf("batch of %d creates, want at most %d", len(batch), maxCreateBatch)
		}
		parents := map[string]bool{}
		for _, j := range batch {
			p := j.op.Path[:len(j.op.Path)-len("/_c_x-latch-")]
			if parents[p] {
				t.Fatalf("two creates of election %s in one batch", p)
			}
			parents[p] = true
		}
		seen += len(batch)
	}
	if seen != total || b.senders != 0 {
		t.Fatalf("%d of %d creates taken, %d senders left", seen, total, b.senders)
	}
}
