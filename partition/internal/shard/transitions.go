package shard

import (
	"context"
	"time"
)

// A handoff has two parts. First the runner checks that the target's
// candidate waits in the election (successor.go): a listing and a read,
// while the shard is still led here and its work goes on. Then it hands
// over: it cancels the work, waits for OnStartedLeading to return, calls
// OnStoppedLeading and resigns; from the cancellation until the successor
// starts, the shard is in transition. Transitions bounds the second part
// only (partition's MaxConcurrentHandoffs: the shards of a member paused at
// once), so the successor checks of the next handoffs run while the
// earlier ones hand over, instead of one after the other behind the same
// bound: a handoff's successor check was about two thirds of its time
// (bench/README.md), and the bound left the ensemble mostly idle.

// Transitions bounds how many of a member's handoffs are in transition at
// once. Its methods may be called from any goroutine.
type Transitions struct {
	slots chan struct{}
}

// NewTransitions returns a bound of n handoffs in transition at once (n at
// least 1).
func NewTransitions(n int) *Transitions {
	return &Transitions{slots: make(chan struct{}, max(n, 1))}
}

// enter waits for a transition slot until ctx ends or stillDue reports
// false (looked at every retargetCheck): true once the slot is taken (the
// caller gives it back with leave). A nil Transitions bounds nothing.
func (t *Transitions) enter(ctx context.Context, stillDue func() bool) bool {
	if t == nil {
		return true
	}
	select {
	case t.slots <- struct{}{}:
		return true
	default:
	}
	tick := time.NewTicker(retargetCheck)
	defer tick.Stop()
	for {
		select {
		case t.slots <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		case <-tick.C:
			if !stillDue() {
				return false
			}
		}
	}
}

// leave gives a slot taken by enter back.
func (t *Transitions) leave() {
	if t != nil {
		<-t.slots
	}
}
