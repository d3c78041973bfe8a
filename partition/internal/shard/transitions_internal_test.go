package shard

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestTransitionsBound: at most n handoffs are in transition at once; a
// wait for a slot goes on once one is given back, and ends without one
// when its context ends or its handoff is no longer due (the shard dealt
// elsewhere meanwhile); a nil Transitions bounds nothing.
func TestTransitionsBound(t *testing.T) {
	ctx := t.Context()
	always := func() bool { return true }
	tr := NewTransitions(2)
	for i := range 2 {
		if !tr.enter(ctx, always) {
			t.Fatalf("slot %d of 2 not taken", i+1)
		}
	}

	entered := make(chan bool, 1)
	go func() { entered <- tr.enter(ctx, always) }()
	select {
	case <-entered:
		t.Fatal("a third handoff entered its transition while two held theirs")
	case <-time.After(3 * retargetCheck):
	}
	tr.leave()
	select {
	case ok := <-entered:
		if !ok {
			t.Fatal("the waiting handoff gave up when a slot was given back")
		}
	case <-time.After(time.Minute):
		t.Fatal("the waiting handoff did not enter within a minute of a slot given back")
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if tr.enter(cancelled, always) {
		t.Fatal("a handoff whose runner was stopped entered a full bound")
	}
	var due atomic.Bool
	due.Store(true)
	go func() { entered <- tr.enter(ctx, due.Load) }()
	due.Store(false) // dealt to yet another member
	select {
	case ok := <-entered:
		if ok {
			t.Fatal("a handoff no longer due entered a full bound")
		}
	case <-time.After(time.Minute):
		t.Fatal("a handoff no longer due still waited for a slot after a minute")
	}

	var none *Transitions
	for range 3 {
		if !none.enter(ctx, always) {
			t.Fatal("no bound refused a handoff")
		}
		none.leave()
	}
}
