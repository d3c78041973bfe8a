package recipe

import "sync"

// mailbox is the unbounded, ordered inbox of one candidate's event loop.
// Posting never blocks (ZooKeeper's callbacks post into it), so thousands of
// candidates cost one slice append each per session event, not a goroutine.
type mailbox struct {
	mu     sync.Mutex
	queue  []any
	closed bool
	ready  chan struct{} // capacity 1: "the queue may be non-empty"
}

func newMailbox() *mailbox { return &mailbox{ready: make(chan struct{}, 1)} }

// post appends m and reports false if the mailbox is closed.
func (b *mailbox) post(m any) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	b.queue = append(b.queue, m)
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
	return true
}

// take returns every queued message, oldest first.
func (b *mailbox) take() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q
}

// close refuses further posts and returns what was still queued.
func (b *mailbox) close() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	q := b.queue
	b.queue = nil
	return q
}
