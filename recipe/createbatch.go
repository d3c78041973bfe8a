package recipe

import (
	"context"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/zkconn"
)

// This file batches the creates of candidates that asked for it
// (WithBatchedCreates): thousands of elections starting together on one
// session (a partition member's cold start) cost a few multi transactions
// instead of one transaction each. Each candidate still lists its
// election right behind the multi that carries its create, on the same
// connection, so it sees its own znode as with a single create.

const (
	// maxCreateBatch is how many creates one multi carries at most (a few
	// hundred bytes each: far below jute.maxbuffer).
	maxCreateBatch = 256
	// maxBatchesInFlight is how many batched multis a session keeps in
	// flight; further creates queue for the next batch.
	maxBatchesInFlight = 4
)

// createJob is one candidate's create waiting for, or riding in, a batch.
type createJob struct {
	op   *zkconn.Create2Request
	sent chan error         // buffered 1: nil once the multi is written, or why it was not
	done chan createOutcome // buffered 1: the create's own result
}

// createOutcome is one create's result in a batch.
type createOutcome struct {
	path string
	stat *zk.Stat
	err  error
	// alone: the create's own operation failed (a missing parent, an ACL):
	// the candidate makes it on its own, as without batching.
	alone bool
}

// createBatcher queues batched creates of one session and sends them as
// multis from short-lived sender goroutines (at most maxBatchesInFlight),
// counted by the connection's Busy so that Session.Close waits for them.
type createBatcher struct {
	conn *zkconn.Conn

	mu      sync.Mutex
	queue   []*createJob
	senders int
}

// submit queues op and returns its job; a sender is started if fewer than
// maxBatchesInFlight run.
func (b *createBatcher) submit(ctx context.Context, op *zkconn.Create2Request) *createJob {
	j := &createJob{op: op, sent: make(chan error, 1), done: make(chan createOutcome, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, j)
	start := b.senders < maxBatchesInFlight
	if start {
		b.senders++
	}
	b.mu.Unlock()
	if start {
		release := b.conn.Busy()
		go func() {
			defer release()
			b.send(ctx)
		}()
	}
	return j
}

// take removes the next batch from the queue: at most maxCreateBatch
// creates, never two in one election (znodes created in one transaction
// share its zxid, and two leaders of one election must never hold the same
// fencing token). An empty batch retires the calling sender.
func (b *createBatcher) take() []*createJob {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch, rest []*createJob
	parents := map[string]bool{}
	size := 0
	for _, j := range b.queue {
		p := path.Dir(j.op.Path)
		n := createOpBytes(j.op)
		if len(batch) == maxCreateBatch || parents[p] || (len(batch) > 0 && size+n > maxBatchBytes) {
			rest = append(rest, j)
			continue
		}
		parents[p] = true
		size += n
		batch = append(batch, j)
	}
	b.queue = rest
	if len(batch) == 0 {
		b.senders--
	}
	return batch
}

// maxBatchBytes bounds a batch's encoded creates, well below jute.maxbuffer
// (1 MiB by default): a request above it is refused by dropping the
// connection, and each create's transaction is larger than its request.
const maxBatchBytes = 512 << 10

// createOpBytes over-estimates op's encoded size in a multi and in its
// transaction (operation header, path with its sequence suffix, data,
// ACL, flags, the transaction's own fields).
func createOpBytes(op *zkconn.Create2Request) int {
	n := 64 + len(op.Path) + len(op.Data)
	for _, a := range op.Acl {
		n += 16 + len(a.Scheme) + len(a.ID)
	}
	return n
}

// send writes batches until the queue is empty.
func (b *createBatcher) send(ctx context.Context) {
	for batch := b.take(); len(batch) > 0; batch = b.take() {
		ops := make([]any, len(batch))
		for i, j := range batch {
			ops[i] = j.op
		}
		call, err := b.conn.SendMulti(ctx, ops...)
		for _, j := range batch {
			j.sent <- err
		}
		if err != nil {
			for _, j := range batch {
				j.done <- createOutcome{err: err}
			}
			continue
		}
		rs, err := call.Result(ctx)
		b.settle(batch, rs, err)
	}
}

// settle hands each job its result. When the transaction failed (for one
// create's own error: a missing parent, an ACL; ZooKeeper applies none of
// the others), every create of the batch is made alone, as without
// batching: the listing each candidate sent behind this multi cannot show
// a znode created later. Without responses (or with a count that does not
// match the batch) the outcome is unknown for all
// of them (connection loss): each candidate treats it as its own create's.
func (b *createBatcher) settle(batch []*createJob, rs []zk.MultiResponse, err error) {
	switch {
	case err == nil && len(rs) == len(batch):
		for i, j := range batch {
			j.done <- createOutcome{path: rs[i].String, stat: rs[i].Stat}
		}
	case len(rs) == len(batch):
		for _, j := range batch {
			j.done <- createOutcome{err: err, alone: true}
		}
	default:
		if err == nil { // a malformed reply: whether it was applied is unknown
			err = fmt.Errorf("multi: %d responses to %d creates: %w", len(rs), len(batch), zk.ErrConnectionClosed)
		}
		for _, j := range batch {
			j.done <- createOutcome{err: err}
		}
	}
}
