package recipe

import (
	"sync"
	"time"
)

// A leadership that ends because its local lease ran out while the
// connection stays up (an overloaded server or connection answering late)
// gets no session event to restart its election, though its znode may still
// be first. Its candidate asks the session to wake it once the lease would
// hold again. One timer per session checks the lease for every waiting
// candidate, so thousands of shard elections wait without a ZooKeeper
// request or a timer of their own, and none is left waiting forever.

// leaseWaiter is one candidate waiting for its lease: wake is called once,
// when the lease with margin holds again.
type leaseWaiter struct {
	margin time.Duration
	wake   func()
}

// leaseWait is the session's set of waiting candidates.
type leaseWait struct {
	mu      sync.Mutex
	waiting map[*leaseWaiter]struct{}
	timer   *time.Timer // armed while anyone waits
	closed  bool
}

// leasePoll is how often the session checks the lease for waiting
// candidates: a twentieth of the session timeout, at least 5 ms.
func leasePoll(timeout time.Duration) time.Duration { return max(timeout/20, 5*time.Millisecond) }

// awaitLease calls w.wake once the lease with w.margin holds again (checked
// every leasePoll), unless cancelLease or Close comes first.
func (s *Session) awaitLease(w *leaseWaiter) {
	lw := &s.leaseWait
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return
	}
	if lw.waiting == nil {
		lw.waiting = map[*leaseWaiter]struct{}{}
	}
	lw.waiting[w] = struct{}{}
	if lw.timer == nil {
		lw.timer = time.AfterFunc(leasePoll(s.Timeout()), s.checkLease)
	}
}

// cancelLease forgets w.
func (s *Session) cancelLease(w *leaseWaiter) {
	lw := &s.leaseWait
	lw.mu.Lock()
	defer lw.mu.Unlock()
	delete(lw.waiting, w)
}

// checkLease wakes the waiters whose lease holds now and re-arms the timer
// while others wait.
func (s *Session) checkLease() {
	lw := &s.leaseWait
	var wake []func()
	lw.mu.Lock()
	for w := range lw.waiting {
		// Wake with a poll interval of lease left at least, as the candidate
		// requires to lead: a lag hovering at the threshold must not make
		// leaderships flap at every poll.
		if d, ok := s.leaseDeadline(w.margin); ok && time.Until(d) >= leasePoll(s.Timeout()) {
			wake = append(wake, w.wake)
			delete(lw.waiting, w)
		}
	}
	lw.timer = nil
	if len(lw.waiting) > 0 && !lw.closed {
		lw.timer = time.AfterFunc(leasePoll(s.Timeout()), s.checkLease)
	}
	lw.mu.Unlock()
	for _, f := range wake {
		f()
	}
}

// closeLeaseWait stops the timer and forgets every waiter (Session.Close).
func (s *Session) closeLeaseWait() {
	lw := &s.leaseWait
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.closed = true
	if lw.timer != nil {
		lw.timer.Stop()
		lw.timer = nil
	}
	clear(lw.waiting)
}
