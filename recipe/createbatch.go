package recipe

import (
	"context"
	"errors"
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
//
// A candidate of a new election (WithNewElection) rides with the create of
// its election's znode in front of its own: when that transaction is
// applied, its znode is the first child of a parent made in the same
// transaction, so it reads its own znode (arming the watch a leader keeps)
// instead of listing. When the transaction fails because the election
// existed after all, that create is queued again without its election's
// (see rolledBack).

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
	op *zkconn.Create2Request
	// election is the create of op's parent, sent in front of op; nil once
	// a batch found the election existing (only the sender touches it).
	election *zkconn.Create2Request
	sent     chan sendOutcome   // buffered 1: the multi was written, or why it was not
	done     chan createOutcome // buffered 1: the create's own result
	// rollbacks counts the transactions that failed for another job's
	// operation while this one rode in them (only the sender touches it).
	rollbacks int
}

// sendOutcome tells a job's candidate that its batch was written (err
// nil) and whether its election's create rode in front of it.
type sendOutcome struct {
	err      error
	election bool
}

// createOutcome is one create's result in a batch.
type createOutcome struct {
	path string
	stat *zk.Stat
	err  error
	// alone: the create's own operation failed (a missing parent, an ACL):
	// the candidate makes it on its own, as without batching.
	alone bool
	// election: the election's znode was created in the same transaction.
	election bool
	// again: the create was queued again (see rolledBack): the candidate
	// drops what it read behind the transaction and waits for the next send.
	again bool
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

// submit queues op, with the create of its election in front when
// election is not nil, and returns its job.
func (b *createBatcher) submit(ctx context.Context, op, election *zkconn.Create2Request) *createJob {
	j := &createJob{op: op, election: election, sent: make(chan sendOutcome, 1), done: make(chan createOutcome, 1)}
	b.enqueue(ctx, j)
	return j
}

// enqueue appends jobs to the queue; a sender is started if fewer than
// maxBatchesInFlight run.
func (b *createBatcher) enqueue(ctx context.Context, jobs ...*createJob) {
	b.mu.Lock()
	b.queue = append(b.queue, jobs...)
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
		if j.election != nil {
			n += createOpBytes(j.election)
		}
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
		var ops []any
		for _, j := range batch {
			if j.election != nil {
				ops = append(ops, j.election)
			}
			ops = append(ops, j.op)
		}
		call, err := b.conn.SendMulti(ctx, ops...)
		for _, j := range batch {
			j.sent <- sendOutcome{err: err, election: j.election != nil}
		}
		if err != nil {
			for _, j := range batch {
				j.done <- createOutcome{err: err}
			}
			continue
		}
		rs, err := call.Result(ctx)
		b.settle(ctx, batch, rs, len(ops), err)
	}
}

// settle hands each job its result. Without responses (or with a count
// that does not match the sent operations) the outcome is unknown for all
// of them (connection loss): each candidate treats it as its own create's.
// A failed transaction is rolledBack's.
func (b *createBatcher) settle(ctx context.Context, batch []*createJob, rs []zk.MultiResponse, sent int, err error) {
	switch {
	case len(rs) != sent:
		if err == nil { // a malformed reply: whether it was applied is unknown
			err = fmt.Errorf("multi: %d responses to %d operations: %w", len(rs), sent, zk.ErrConnectionClosed)
		}
		for _, j := range batch {
			j.done <- createOutcome{err: err}
		}
	case err != nil:
		b.rolledBack(ctx, batch, rs, err)
	default:
		i := 0
		for _, j := range batch {
			if j.election != nil {
				i++ // the election's own create
			}
			j.done <- createOutcome{path: rs[i].String, stat: rs[i].Stat, election: j.election != nil}
			i++
		}
	}
}

// maxRollbacks is how often a create is queued again after transactions
// that failed for other creates before it is made alone.
const maxRollbacks = 2

// rolledBack handles a transaction ZooKeeper refused as a whole for its
// first failed operation (ZooKeeper applies none of a failed multi, and
// stops at the first failure, so only that one is known). That
// operation's job is the culprit: if its election's create found the
// election existing, it is queued again without it; if its own create
// failed (a missing parent, an ACL), it is made alone, as without
// batching. Every other job is queued again as it was, up to maxRollbacks
// times, then made alone: a batch of many failing creates costs a few
// transactions, never one per create in a row. A job queued again tells
// its candidate, which drops the read it sent behind this transaction
// (it cannot show a znode created later) and reads again behind the next.
// When no operation names the failure, every job is made alone.
func (b *createBatcher) rolledBack(ctx context.Context, batch []*createJob, rs []zk.MultiResponse, err error) {
	culprit, existed := failedJob(batch, rs)
	var again []*createJob
	for _, j := range batch {
		switch {
		case culprit != nil && j == culprit && existed:
			j.election = nil
		case culprit == nil || j == culprit || j.rollbacks >= maxRollbacks:
			j.done <- createOutcome{err: err, alone: true}
			continue
		default:
			j.rollbacks++
		}
		j.done <- createOutcome{again: true}
		again = append(again, j)
	}
	if len(again) > 0 {
		b.enqueue(ctx, again...)
	}
}

// failedJob returns the job whose operation failed the transaction (the
// first response with an error other than a rollback), and whether that
// was its election's create finding the election existing; nil when no
// response names one.
func failedJob(batch []*createJob, rs []zk.MultiResponse) (*createJob, bool) {
	i := 0
	for _, j := range batch {
		if j.election != nil {
			if failedOp(rs[i].Error) {
				return j, errors.Is(rs[i].Error, zk.ErrNodeExists)
			}
			i++
		}
		if failedOp(rs[i].Error) {
			return j, false
		}
		i++
	}
	return nil, false
}

// failedOp reports whether a multi response's error is the operation's
// own failure, not the rollback of an operation that would have succeeded.
func failedOp(err error) bool { return err != nil && !zkconn.RolledBack(err) }
