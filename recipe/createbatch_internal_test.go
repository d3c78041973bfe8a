package recipe

import (
	"fmt"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
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

// TestRolledBackBlamesOnlyTheFailedCreate: a multi fails as a whole for
// its first failed operation. The job it belongs to is the culprit: one
// whose election existed is queued again without its election's create,
// one whose own create failed is made alone; every other job is queued
// again as it was, up to maxRollbacks times, then made alone, so a batch
// of failing creates costs a few transactions, not one per create.
func TestRolledBackBlamesOnlyTheFailedCreate(t *testing.T) {
	rolled := &zkconn.CodeError{Op: "multi", Code: jute.CodeRuntimeInconsistency}
	job := func(election string) *createJob {
		j := &createJob{op: &zkconn.Create2Request{Path: election + "/_c_x-latch-"},
			sent: make(chan sendOutcome, 1), done: make(chan createOutcome, 1)}
		j.election = &zkconn.Create2Request{Path: election}
		return j
	}
	a, b, c := job("/a"), job("/b"), job("/c")
	c.election = nil                                  // c's election exists: a plain create
	bt := &createBatcher{senders: maxBatchesInFlight} // starts no sender
	steps := []struct {
		name  string
		batch []*createJob
		rs    []zk.MultiResponse
		err   error
		alone []*createJob
	}{
		{"b's election exists", []*createJob{a, b, c},
			[]zk.MultiResponse{{}, {}, {Error: zk.ErrNodeExists}, {Error: rolled}, {Error: rolled}}, zk.ErrNodeExists, nil},
		{"c's create refused", []*createJob{a, b, c},
			[]zk.MultiResponse{{}, {}, {}, {Error: zk.ErrNoAuth}}, zk.ErrNoAuth, []*createJob{c}},
		{"b's create finds no parent", []*createJob{a, b},
			[]zk.MultiResponse{{}, {}, {Error: zk.ErrNoNode}}, zk.ErrNoNode, []*createJob{a, b}},
	}
	for _, s := range steps {
		bt.queue = nil
		bt.rolledBack(t.Context(), s.batch, s.rs, s.err)
		for _, j := range s.batch {
			out := <-j.done
			if alone := slices.Contains(s.alone, j); out.alone != alone || out.again == alone {
				t.Fatalf("%s: job %s: alone %v again %v, want alone %v", s.name, j.op.Path, out.alone, out.again, alone)
			}
		}
		if len(bt.queue) != len(s.batch)-len(s.alone) {
			t.Fatalf("%s: %d jobs queued again, want %d", s.name, len(bt.queue), len(s.batch)-len(s.alone))
		}
		if s.name == "b's election exists" && (b.election != nil || a.election == nil) {
			t.Fatalf("%s: only b loses its election's create (a: %v, b: %v)", s.name, a.election, b.election)
		}
	}
	if a.rollbacks != maxRollbacks {
		t.Fatalf("a was rolled back %d times before going alone, want %d", a.rollbacks, maxRollbacks)
	}
}
