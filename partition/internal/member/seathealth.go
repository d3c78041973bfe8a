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
