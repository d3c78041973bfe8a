package shard

import "sync"

// StartQueue starts the runners of the shards newly assigned here, one
// after another on one goroutine that runs while any wait (the loop never
// blocks on a start): placing an election on a session may open a sibling
// session, and the places are taken in turn anyway. A started runner
// waits for its campaign's slot in its session's line (limiter), still
// without a goroutine of its own. A cold start of thousands of shards then
// never has thousands of goroutines at once: Go never frees a goroutine's
// runtime record, so the heap keeps as many as were ever alive together.
type StartQueue struct {
	Workers *sync.WaitGroup // the loop's: the goroutine is counted in it

	mu      sync.Mutex
	queue   []*Runner
	running bool // the goroutine runs
}

// Push queues r's start, starting the goroutine if none runs.
func (q *StartQueue) Push(r *Runner) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, r)
	if !q.running {
		q.running = true
		q.Workers.Add(1)
		go q.drain()
	}
}

// drain starts the queued runners until none is left.
func (q *StartQueue) drain() {
	defer q.Workers.Done()
	for r := q.next(); r != nil; r = q.next() {
		r.start()
	}
}

// next takes the oldest queued runner; nil (and the goroutine is done)
// when none is left. Served entries leave no reference behind.
func (q *StartQueue) next() *Runner {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.queue, q.running = nil, false
		return nil
	}
	r := q.queue[0]
	q.queue[0] = nil
	q.queue = q.queue[1:]
	return r
}
