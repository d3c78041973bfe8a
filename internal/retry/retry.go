// Package retry is zkelect's one retry schedule: a doubling backoff, a
// context-aware sleep, and a loop that calls an attempt until it is done.
// Every retry loop of the module (the connection layer, the recipe, the
// partition manager, the CLI) uses it, so pauses are bounded the same way
// everywhere and ctx always ends a wait.
package retry

import (
	"context"
	"time"
)

// Backoff is the one retry schedule for transient errors (the connection
// layer's ClassRetry): a pause that starts at Min and doubles after every
// failed attempt up to Max. The zero value pauses 20ms to 1s. Not safe for
// concurrent use: each retry loop owns one.
type Backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// Next returns the pause before the next attempt and doubles the one
// after it.
func (b *Backoff) Next() time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = 20 * time.Millisecond
	}
	if hi <= 0 {
		hi = max(lo, time.Second)
	}
	if b.cur == 0 {
		b.cur = lo
	} else {
		b.cur = min(2*b.cur, hi)
	}
	return b.cur
}

// Reset starts the schedule again at Min (after a success).
func (b *Backoff) Reset() { b.cur = 0 }

// Wait blocks for the next pause (Next) or until ctx ends; it reports
// whether the pause passed.
func (b *Backoff) Wait(ctx context.Context) bool { return Sleep(ctx, b.Next()) }

// WaitOr is Wait that also ends when wake is closed (nil: never), such
// as the session's next connect taken before the attempt
// (recipe.Session.NextConnect): an attempt that failed for want of a
// session is tried again as soon as there is one. It reports false only
// when ctx ended. The schedule still doubles, so a wake that does not help
// is followed by the full pause.
func (b *Backoff) WaitOr(ctx context.Context, wake <-chan struct{}) bool {
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-wake:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// Sleep waits d or until ctx ends; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Forever calls round until ctx ends: a loop that re-arms a watch, one
// round per call. After a round that fails it calls failed with the error
// and pauses by b; after one that succeeds it resets b. A round that fails
// because ctx ended (the caller's own leaving) is not reported to failed.
func Forever(ctx context.Context, b *Backoff, round func() error, failed func(error)) {
	ForeverWaking(ctx, b, nil, round, failed)
}

// ForeverWaking is Forever whose pause after a failed round also ends
// when the channel wake returned before that round is closed (wake nil:
// never; see WaitOr): a round that failed for want of a session runs
// again at the session's next connect (recipe.Session.NextConnect).
func ForeverWaking(ctx context.Context, b *Backoff, wake func() <-chan struct{}, round func() error, failed func(error)) {
	for ctx.Err() == nil {
		var woke <-chan struct{}
		if wake != nil {
			woke = wake()
		}
		if err := round(); err != nil {
			if ctx.Err() != nil {
				return // not a failure: our own leaving
			}
			failed(err)
			b.WaitOr(ctx, woke)
			continue
		}
		b.Reset()
	}
}

// Do calls attempt until it reports done, pausing by a zero Backoff
// between attempts (20 ms doubling to 1 s). It returns the error of the
// last attempt; when ctx ends first, that error, or ctx's if there was
// none. It is the shape of every "until it succeeds or ctx ends" loop.
func Do(ctx context.Context, attempt func() (done bool, err error)) error {
	var b Backoff
	for {
		done, err := attempt()
		if done {
			return err
		}
		if !b.Wait(ctx) {
			if err == nil {
				err = ctx.Err()
			}
			return err
		}
	}
}
