package member

import "time"

// SeatHealth tells whether one of the member's sibling sessions can lead:
// it is down once it has not been connected for longer than its session
// timeout, as far as the server can tell: half a timeout after its lease
// ran out (the instant before which ZooKeeper cannot have expired it, a
// timeout after its quorum leader last heard of it), or a timeout after it
// was first seen without a connection, whichever comes first. A session
// that reconnects within that (a server restart, a quorum-leader
// failover) is not down, and its leaderships resume as they would anyway.
// Its methods take the time as an argument; only the loop goroutine
// calls them.
type SeatHealth struct {
	lease  time.Time // the latest lease deadline seen; zero before any
	lostAt time.Time // when it was first seen without a connection; zero while connected
	down   bool
	marked time.Time // when the loop last marked its shards unavailable (DueMark)
}

// DueMark reports whether the shards of the session, down, should be
// marked again at now: once when it goes down, then every every (a runner
// still leading on it when it went down may have lost its leadership
// since), and notes the marking.
func (h *SeatHealth) DueMark(now time.Time, every time.Duration) bool {
	if !h.marked.IsZero() && now.Sub(h.marked) < every {
		return false
	}
	h.marked = now
	return true
}

// Observe records a look at the session at now: connected, and its lease
// deadline when known (ok). It returns whether the session is down, and,
// while it is not connected but not down yet, when it will be down if
// nothing changes (zero otherwise).
func (h *SeatHealth) Observe(now time.Time, connected bool, lease time.Time, ok bool, timeout time.Duration) (down bool, at time.Time) {
	if ok && lease.After(h.lease) {
		h.lease = lease
	}
	if connected {
		h.lostAt, h.down, h.marked = time.Time{}, false, time.Time{}
		return false, time.Time{}
	}
	if h.lostAt.IsZero() {
		h.lostAt = now
	}
	deadline := h.lostAt.Add(timeout)
	if !h.lease.IsZero() && h.lease.Add(timeout/2).Before(deadline) {
		deadline = h.lease.Add(timeout / 2)
	}
	h.down = !now.Before(deadline)
	if h.down {
		return true, time.Time{}
	}
	return false, deadline
}

// Down reports whether the session was down at the last Observe.
func (h *SeatHealth) Down() bool { return h.down }

// SeatLook is what the shell saw of one sibling session at a look: its
// connection, its lease deadline when known, its session timeout.
type SeatLook struct {
	Connected  bool
	Lease      time.Time
	LeaseKnown bool
	Timeout    time.Duration
}

// SeatChange is what a look at a sibling session changed.
type SeatChange uint8

// The changes a look at a sibling session reports.
const (
	SeatSame     SeatChange = iota // no change of state (its shards may be marked again)
	SeatWentDown                   // down since this look: its elections are placed elsewhere
	SeatCameUp                     // up again: its shards are dealt as before
)

// Seat notes a look at the sibling session on at now (Seats keeps what it
// saw of each). While it is down its shards not led here (shardsOn: the
// shards whose elections sit on it, read only when due) are marked
// unavailable once it goes down and then every half session timeout
// (MarkUnavailable); once it is up again the marks go (the assignment
// and the record change). It returns the change and the plan: a wake
// when a session not connected now will be down.
func (c *Core[S]) Seat(on S, look SeatLook, shardsOn func() []string, now time.Time) (SeatChange, Plan) {
	var p Plan
	h := c.Seats[on]
	if h == nil {
		h = &SeatHealth{}
		c.Seats[on] = h
	}
	wasDown := h.Down()
	down, at := h.Observe(now, look.Connected, look.Lease, look.LeaseKnown, look.Timeout)
	if !at.IsZero() {
		p.wake(at.Sub(now))
	}
	switch {
	case down:
		if h.DueMark(now, look.Timeout/2) && c.MarkUnavailable(shardsOn(), on, now) {
			c.Steps.Dirty = true
		}
		if !wasDown {
			return SeatWentDown, p
		}
	case wasDown:
		if c.Unavail.ClearSeat(on) {
			c.Steps.Dirty, p.RecordChanged = true, true
		}
		return SeatCameUp, p
	}
	return SeatSame, p
}
