package partition

import (
	"context"
	"testing"
	"time"
)

// TestLimiterAdaptsToAnswerLag starts at limiterStart, grows by one per
// prompt release up to the cap, halves on a late one (once per lag), and
// never goes below limiterMin; a waiter gets the slot a release frees.
func TestLimiterAdaptsToAnswerLag(t *testing.T) {
	const timeout = time.Second
	lag := 10 * time.Millisecond
	l := newLimiter(40, func() time.Duration { return lag }, func() time.Duration { return timeout })
	ctx := context.Background()
	cycle := func(n int) {
		for range n {
			if !l.acquire(ctx) {
				t.Fatal("acquire failed with a live ctx")
			}
			l.release()
		}
	}
	if got := l.bound(); got != limiterStart {
		t.Fatalf("initial bound %d, want %d", got, limiterStart)
	}
	cycle(20)
	if got := l.bound(); got != 40 {
		t.Fatalf("bound after prompt answers %d, want the cap 40", got)
	}
	lag = 800 * time.Millisecond // over timeout/4
	cycle(1)
	if got := l.bound(); got != 20 {
		t.Fatalf("bound after a late answer %d, want 20", got)
	}
	cycle(5) // within one lag of the cut: no further halving
	if got := l.bound(); got != 20 {
		t.Fatalf("bound after more late answers within one lag %d, want 20", got)
	}
	l.lastCut = time.Time{}
	for range 10 {
		cycle(1)
		l.lastCut = time.Time{}
	}
	if got := l.bound(); got != limiterMin {
		t.Fatalf("bound after many late answers %d, want the floor %d", got, limiterMin)
	}
	lag = 200 * time.Millisecond // between timeout/8 and timeout/4: hold
	cycle(3)
	if got := l.bound(); got != limiterMin {
		t.Fatalf("bound with a middling lag %d, want it held at %d", got, limiterMin)
	}

	// All slots taken: a waiter gets the one a release frees; a waiter
	// whose ctx ends gives up.
	for range limiterMin {
		l.acquire(ctx)
	}
	got := make(chan bool, 1)
	go func() { got <- l.acquire(ctx) }()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if l.acquire(gone) {
		t.Fatal("acquire with a cancelled ctx succeeded while every slot was taken")
	}
	l.release()
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("waiter failed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiter never got the freed slot")
	}
}

// TestLimiterNeverExceedsItsCap halves a cap below limiterMin: the bound
// stays at the cap.
func TestLimiterNeverExceedsItsCap(t *testing.T) {
	l := newLimiter(2, func() time.Duration { return time.Second }, func() time.Duration { return time.Second })
	if !l.acquire(context.Background()) {
		t.Fatal("acquire failed")
	}
	l.release() // a late answer: halve, but never above the cap
	if got := l.bound(); got != 2 {
		t.Fatalf("bound %d after a late answer with MaxInFlight 2, want 2", got)
	}
}
