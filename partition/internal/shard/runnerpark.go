package shard

import (
	"context"
	"sync"

	"github.com/zkelect/zkelect/recipe"
)

// A runner holding a leadership waits without a goroutine: it parks, and
// the first of its wake-ups (the leadership's context ends, the runner is
// stopped, the loop asks for a handoff) starts a goroutine that
// resumes it. At 10,000 led shards a member then costs no goroutine, and no
// goroutine stack, per shard. One goroutine at a time runs the runner: the
// parking mutex hands its state from the one that parked to the one that
// resumes.

// heldLeadership is the leadership a runner holds, with its callback.
type heldLeadership struct {
	lead       *recipe.Leadership
	cancelWork context.CancelFunc // cancels OnStartedLeading's context
	callback   callback           // OnStartedLeading's run
}

// callback tells when OnStartedLeading returned. Its channel is made only
// for a wait that starts before the callback returned: a callback that
// returns at once (it starts work elsewhere) costs none.
type callback struct {
	mu       sync.Mutex
	returned bool
	done     chan struct{} // closed once returned; nil until a wait needs it
}

// finish records that the callback returned.
func (cb *callback) finish() {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	cb.returned = true
	if cb.done != nil {
		close(cb.done)
	}
}

// wait returns a channel closed once the callback returned; nil if it has.
func (cb *callback) wait() <-chan struct{} {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.returned {
		return nil
	}
	if cb.done == nil {
		cb.done = make(chan struct{})
	}
	return cb.done
}

// parking is a runner's parked state.
type parking struct {
	mu     sync.Mutex
	parked bool
	stop   func() bool // undoes the leadership context's wake-up, on waking
}

// park ends the runner's goroutine's turn while it holds a leadership:
// wake resumes it on a new goroutine. Only the end of the leadership needs
// a registration (on its context); stop and askHandoff call wake
// themselves, and one that came before it parked wakes it at once.
func (r *Runner) park() {
	p := &r.parking
	p.mu.Lock()
	p.parked = true
	p.stop = context.AfterFunc(r.held.lead.Context(), r.wake)
	p.mu.Unlock()
	if r.Stopping() || r.handoffAsked() {
		r.wake()
	}
}

// wake resumes a parked runner on a new goroutine; it does nothing if the
// runner is not parked (another wake-up came first). Any goroutine may
// call it.
func (r *Runner) wake() {
	p := &r.parking
	p.mu.Lock()
	if !p.parked {
		p.mu.Unlock()
		return
	}
	p.parked = false
	stop := p.stop
	p.stop = nil
	p.mu.Unlock()
	stop()
	go r.resume()
}

// resume continues a woken runner: if its leadership ends now it stops
// leading and campaigns again (or finishes), else it parks again (a
// deferred handoff).
func (r *Runner) resume() {
	p := &r.parking
	p.mu.Lock() // orders this goroutine after the one that parked
	p.mu.Unlock()
	ended, reason := r.holdEnded()
	if !ended {
		r.park()
		return
	}
	r.stopLeading(reason)
	r.leaveTransition() // resigned: the shard is the successor's
	r.campaignLoop(false)
}
