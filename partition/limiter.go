package partition

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
	waiters []chan struct{} // acquirers waiting for a slot, oldest first
	lastCut time.Time       // when the bound last halved
}

func newLimiter(max int, lag, timeout func() time.Duration) *limiter {
	return &limiter{lag: lag, timeout: timeout, max: max, limit: min(limiterStart, max)}
}

// acquire waits for a slot until ctx ends; false if it ended first.
func (l *limiter) acquire(ctx context.Context) bool {
	l.mu.Lock()
	if l.inUse < l.limit && len(l.waiters) == 0 {
		l.inUse++
		l.mu.Unlock()
		return true
	}
	ch := make(chan struct{}, 1)
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, w := range l.waiters {
		if w == ch {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			return false
		}
	}
	// Handed a slot just as ctx ended: pass it on.
	l.inUse--
	l.wake()
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

// wake hands free slots to waiters, oldest first (l.mu held).
func (l *limiter) wake() {
	for l.inUse < l.limit && len(l.waiters) > 0 {
		l.inUse++
		l.waiters[0] <- struct{}{}
		l.waiters = l.waiters[1:]
	}
}

// bound returns the current bound (for metrics and tests).
func (l *limiter) bound() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}
