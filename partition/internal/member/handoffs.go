package member

import "time"

// This file keeps the member's balancing handoffs: the shards led here
// and assigned elsewhere settling, those settled and queued for the
// throttle, and how many are in flight.

// Handoffs is the balancing handoffs of one member. A shard led here and
// assigned elsewhere is handed off once it has stayed assigned elsewhere
// for the settle delay (Settled), then waits in the queue until fewer
// than the throttle's limit are asked (Next: SuccessorChecksPerSlot times
// the member's bound on handoffs in transition).
type Handoffs struct {
	inFlight int                  // asked of their runners, not finished or deferred yet
	queue    []string             // settled, waiting for the throttle
	moving   map[string]time.Time // led here, assigned elsewhere since
}

// NewHandoffs returns no handoffs.
func NewHandoffs() Handoffs { return Handoffs{moving: map[string]time.Time{}} }

// InFlight returns how many handoffs are in flight.
func (h *Handoffs) InFlight() int { return h.inFlight }

// Settling reports whether some shard is settling (a step must look at it
// again when its delay is over).
func (h *Handoffs) Settling() bool { return len(h.moving) > 0 }

// Forget ends the settling of shard s: it is assigned here again, not led
// here, or its runner is gone.
func (h *Handoffs) Forget(s string) { delete(h.moving, s) }

// ForgetUnless ends the settling of every shard for which keep reports
// false (its runner is gone). It costs the shards settling.
func (h *Handoffs) ForgetUnless(keep func(s string) bool) {
	for s := range h.moving {
		if !keep(s) {
			delete(h.moving, s)
		}
	}
}

// Settled reports whether shard s, led here and assigned elsewhere, has
// been so for delay at now. A drained member's shards are settled at once
// (drained: every assignment deals them elsewhere, whatever the records
// say). begun: s began settling now (a step that ends it must not wait
// long); wait: how long until it is settled, when it is not.
func (h *Handoffs) Settled(s string, now time.Time, delay time.Duration, drained bool) (ok, begun bool, wait time.Duration) {
	if drained {
		return true, false, 0
	}
	since, seen := h.moving[s]
	if !seen {
		since = now
		h.moving[s] = now
	}
	if now.Sub(since) >= delay {
		return true, !seen, 0
	}
	return false, !seen, delay - now.Sub(since)
}

// Requeue empties the queue for a step to fill again (Queue) and returns
// how many it held.
func (h *Handoffs) Requeue() int {
	n := len(h.queue)
	h.queue = h.queue[:0]
	return n
}

// Queue adds shard s, settled, to the queue.
func (h *Handoffs) Queue(s string) { h.queue = append(h.queue, s) }

// Queued returns how many settled handoffs wait for the throttle.
func (h *Handoffs) Queued() int { return len(h.queue) }

// SuccessorChecksPerSlot is how many handoffs a member asks at once for
// each one it lets be in transition (limit, the member's
// MaxConcurrentHandoffs, which its runners enforce: partition/internal/shard's
// Transitions). A handoff first checks that its successor waits in the
// election, a listing and a read while the shard is still led and works
// (about two thirds of a handoff's time, bench/README.md), and only then
// cancels the work and resigns. Asking more than limit lets the next
// handoffs' checks run while the earlier ones hand over. Twice limit, not
// more: the checks' reads go on the member's own session, whose answer lag
// its leaderships' leases follow, and at four times a join under load
// suspended leaderships (bench/README.md).
const SuccessorChecksPerSlot = 2

// Next starts queued handoffs while fewer than SuccessorChecksPerSlot
// times limit are in flight (asked, not ended): ask is given each queued
// shard in turn and reports whether its handoff was asked (the shell asks
// the runner; false for an entry no longer due, or a runner whose earlier
// request is not taken yet). A handoff that ended (Ended) is followed by
// the next one at once, not at the next step.
func (h *Handoffs) Next(limit int, ask func(s string) bool) {
	for h.inFlight < limit*SuccessorChecksPerSlot && len(h.queue) > 0 {
		s := h.queue[0]
		h.queue = h.queue[1:]
		if ask(s) {
			h.inFlight++
		}
	}
}

// Ended notes that a handoff in flight ended: done (its runner finished),
// or given back at now with the shard still led here (deferred: it settles
// again before it is asked again).
func (h *Handoffs) Ended(s string, now time.Time, deferred bool) {
	h.inFlight--
	if deferred {
		h.moving[s] = now
	} else {
		delete(h.moving, s)
	}
}
