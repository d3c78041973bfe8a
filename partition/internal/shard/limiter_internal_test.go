package shard

import (
	"context"
	"testing"
	"time"
)

// TestLimiterAdaptsToAnswerLag starts at limiterStart, grows by one per
// prompt release up to the cap, halves on a late one (once per lag), and
// never goes below limiterMin.
func TestLimiterAdaptsToAnswerLag(t *testing.T) {
	const timeout = time.Second
	lag := 10 * time.Millisecond
	l := newLimiter(40, func() time.Duration { return lag }, func() time.Duration { return timeout })
	cycle := func(n int) {
		for range n {
			if !takeFree(t, l) {
				t.Fatal("no free slot in an idle limiter")
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
}

// takeFree takes a free slot of l, if any (a start that would have to
// wait fails the test when it runs).
func takeFree(t *testing.T, l *limiter) bool {
	return l.startWhenFree(context.Background(), func(bool) { t.Error("a start that found no free slot ran") })
}

// TestLimiterNeverExceedsItsCap halves a cap below limiterMin: the bound
// stays at the cap.
func TestLimiterNeverExceedsItsCap(t *testing.T) {
	l := newLimiter(2, func() time.Duration { return time.Second }, func() time.Duration { return time.Second })
	if !takeFree(t, l) {
		t.Fatal("no free slot in an idle limiter")
	}
	l.release() // a late answer: halve, but never above the cap
	if got := l.bound(); got != 2 {
		t.Fatalf("bound %d after a late answer with MaxInFlight 2, want 2", got)
	}
}

// TestLimiterQueuedStartsRunInTurnAndLeaveNothingBehind fills every slot:
// a start then waits in line without a goroutine and runs holding the slot
// a release frees; a start whose ctx ended by its turn runs without one;
// and once the line is empty the limiter keeps no storage of it (a cold
// start queues thousands).
func TestLimiterQueuedStartsRunInTurnAndLeaveNothingBehind(t *testing.T) {
	prompt := func() time.Duration { return 0 }
	l := newLimiter(2, prompt, func() time.Duration { return time.Second })
	ctx := context.Background()
	for range 2 {
		if !takeFree(t, l) {
			t.Fatal("no free slot in an idle limiter")
		}
	}
	ran := make(chan bool, 2)
	gone, cancel := context.WithCancel(ctx)
	if l.startWhenFree(gone, func(holding bool) { ran <- holding }) {
		t.Fatal("startWhenFree took a slot while every slot was taken")
	}
	if l.startWhenFree(ctx, func(holding bool) { ran <- holding }) {
		t.Fatal("startWhenFree took a slot while every slot was taken")
	}
	cancel()
	l.release()
	holding := 0
	for range 2 { // each on its own goroutine: in either order
		select {
		case h := <-ran:
			if h {
				holding++
			}
		case <-time.After(10 * time.Second):
			t.Fatal("queued start never ran after a release")
		}
	}
	if holding != 1 {
		t.Fatalf("%d queued starts ran holding a slot, want 1 (the other one's ctx had ended)", holding)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inUse != 2 {
		t.Fatalf("%d slots in use, want 2 (the abandoned start took none)", l.inUse)
	}
	if l.waiters != nil {
		t.Fatalf("limiter keeps a reference to its empty line's storage (len %d, cap %d)", len(l.waiters), cap(l.waiters))
	}
}
