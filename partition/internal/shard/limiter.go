package shard

import (
	"context"
	"sync"
	"time"
)

// This file bounds how many elections a member starts at once on its
// session, and adapts the bound to how promptly ZooKeeper answers.
//
// A member starting thousands of elections pipelines their requests on one
// session. If the server (or the path to it) answers fewer requests per
// second than the member sends, the requests wait in line, every answer
// comes later, and once answers lag by more than the lease allows (see
// recipe.Session.AnswerLag) no leadership can hold: each is
// suspended as soon as it starts, and a cold start never converges. So the
// bound follows TCP's congestion control (additive increase, multiplicative
// decrease): it starts low, grows by one for every election started while
// answers are prompt, and halves, at most once per lag, when they are late.

const (
	// limiterStart is the bound at the first election (slow start).
	limiterStart = 32
	// limiterMin is the least the bound shrinks to.
	limiterMin = 4
	// lagSlow and lagFast are the answer lags, as fractions of the session
	// timeout, above which the bound halves and below which it grows. An
	// idle session's lag reaches a sixth (the interval of the syncs that
	// renew its lease); the default lease ends once those syncs wait in
	// line for a third.
	lagSlowDiv = 4 // lag > timeout/4: halve
	lagFastDiv = 8 // lag < timeout/8: grow
)

// limiter is the adaptive bound on elections starting at once.
type limiter struct {
	lag     func() time.Duration // the session's answer lag
	timeout func() time.Duration // the session timeout

	mu      sync.Mutex
	limit   int // current bound, in limiterMin..max
	max     int // Config.MaxInFlight
	inUse   int
	waiters []waiter  // waiting for a slot, oldest first
	lastCut time.Time // when the bound last halved
}

// waiter is one start waiting for a slot without a goroutine (see
// startWhenFree).
type waiter struct {
	ctx   context.Context    // once it ends the start needs no slot
	start func(holding bool) // the continuation, run on a new goroutine
}

func newLimiter(max int, lag, timeout func() time.Duration) *limiter {
	return &limiter{lag: lag, timeout: timeout, max: max, limit: min(limiterStart, max)}
}

// startWhenFree takes a slot for a start that goes on with start: true if
// one is free now (the caller goes on, holding it, and start is not
// called). Otherwise the start waits in line without a goroutine, oldest
// first, and start runs on a new goroutine once it is given a slot
// (holding true), or without one (false) once ctx has ended by the time it
// is its turn. A cold start queues thousands of elections: blocked on a
// channel each, they would be thousands of goroutines, whose runtime
// records Go never frees.
func (l *limiter) startWhenFree(ctx context.Context, start func(holding bool)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inUse < l.limit && len(l.waiters) == 0 {
		l.inUse++
		return true
	}
	l.waiters = append(l.waiters, waiter{ctx: ctx, start: start})
	return false
}

// release gives a slot back and adapts the bound to the session's answer
// lag now.
func (l *limiter) release() {
	lag, timeout := l.lag(), l.timeout()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inUse--
	switch now := time.Now(); {
	case lag > timeout/lagSlowDiv && now.Sub(l.lastCut) > lag:
		l.limit = min(max(l.limit/2, limiterMin), l.max)
		l.lastCut = now
	case lag < timeout/lagFastDiv:
		l.limit = min(l.limit+1, l.max)
	}
	l.wake()
}

// wake hands free slots to waiters, oldest first (l.mu held). A waiter
// served leaves no reference behind: its entry is cleared, and the backing
// array goes once the line is empty (a cold start queues thousands).
func (l *limiter) wake() {
	for len(l.waiters) > 0 {
		w := l.waiters[0]
		abandoned := w.ctx.Err() != nil
		if !abandoned && l.inUse >= l.limit {
			break
		}
		l.waiters[0] = waiter{}
		l.waiters = l.waiters[1:]
		if !abandoned {
			l.inUse++
		}
		go w.start(!abandoned)
	}
	if len(l.waiters) == 0 {
		l.waiters = nil
	}
}

// bound returns the current bound (for metrics and tests).
func (l *limiter) bound() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}
