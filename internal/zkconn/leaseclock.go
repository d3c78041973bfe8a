package zkconn

import (
	"time"

	"github.com/zkelect/zkelect/internal/jute"
)

// The lease clock: the instant before which ZooKeeper cannot have expired
// the session, on this process's monotonic clock.
//
// Only the quorum leader expires sessions. It renews a session when it
// hears of it: directly for its own clients, and for a follower's at the
// follower's next answer to the leader's heartbeat (sent every half tick),
// which lists the sessions the follower heard from since its last one. A
// follower cut off from the leader keeps answering its clients' pings and
// reads until its own read timeout (syncLimit ticks, seconds in common
// set-ups) while the leader lets their sessions expire and others lead. So
// the lease is renewed only from answers that prove the leader heard of the
// session:
//
//   - a connect response: the leader granted the session, or a follower
//     had the leader revalidate it, after the connect request was sent;
//   - the answer to a sync, which a follower passes to the leader and
//     answers only once the leader sent it back: every frame the client
//     sent before that sync on the same connection reached the follower
//     first, and one sent at least half a tick before it was reported to
//     the leader in a heartbeat answer that travelled ahead of the sync.
//     The lease then counts from the send time of the latest sync sent at
//     least leaseProofGap (an eighth of the session timeout) before the
//     one answered: the previous one, syncs going every sixth. That is half
//     a tick or more for sessions of at least four ticks (ZooKeeper's
//     default bounds are 2 to 20); on shorter ones the leader may have
//     heard of the session up to a quarter of a tick earlier than the lease
//     assumes, which the margin must cover.
//
// Pings and reads a follower answers keep the connection, not the lease.
// The session sends one sync every syncInterval while connected (not per
// election): 6 requests per session timeout, 0.6 a second on the default
// 10 s session. The lease with margin m then has, just before each
// renewal, timeout − m − 2 × syncInterval − (the sync's round trip) left:
// five twelfths of the timeout less the round trip on the default margin.

// leaseProofGap is how long before an answered sync an earlier sync (or
// the connect request) must have been sent for the answer to prove that
// the quorum leader heard of the session after it, for a session timeout
// t.
func leaseProofGap(t time.Duration) time.Duration { return t / 8 }

// syncInterval is how often the session sends a sync to renew its lease,
// for a session timeout t.
func syncInterval(t time.Duration) time.Duration { return max(t/6, time.Millisecond) }

// maxSyncsInFlight bounds the syncs awaiting their answer on one
// connection: a connection that answers none gets no more (the request
// deadline closes it after a session timeout).
const maxSyncsInFlight = 6

// vouch records that the quorum leader heard of the session after t.
func (w *wireTracker) vouch(t time.Time) { w.stamp(&w.leaseFrom, t) }

// leaseDeadline returns the instant (monotonic) before which the server
// cannot have expired the session: the latest instant the quorum leader is
// known to have heard of it after, plus the timeout. ok is false while
// nothing vouches for the session.
func (w *wireTracker) leaseDeadline() (time.Time, bool) {
	ns := w.leaseFrom.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return w.epoch.Add(time.Duration(ns-1) + w.timeout()), true
}

// lastAnswer returns the send time of the latest request or ping answered;
// ok is false before any.
func (w *wireTracker) lastAnswer() (time.Time, bool) {
	ns := w.lastAnswered.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return w.epoch.Add(time.Duration(ns - 1)), true
}

// sendSync writes a sync of "/" on c for the lease, unless maxSyncsInFlight
// are unanswered; false if nothing was written.
func (c *wireConn) sendSync() bool {
	xid := c.w.nextCallXid()
	frame := jute.SyncRequest(xid, "/")
	c.mu.Lock()
	if c.syncsInFlight >= maxSyncsInFlight {
		c.mu.Unlock()
		return false
	}
	now := time.Now() // before the write: never later than the server's receipt
	c.pending[xid] = sentRequest{at: now, op: jute.OpSync, lease: true}
	c.syncs = append(c.syncs[max(len(c.syncs)-2*maxSyncsInFlight+1, 0):], now)
	c.syncsInFlight++
	c.mu.Unlock()
	if !c.inject(frame) {
		c.mu.Lock()
		delete(c.pending, xid)
		c.syncsInFlight--
		c.mu.Unlock()
		return false
	}
	return true
}

// syncAnswered renews the lease from the answer, with error code code, to
// the sync r (the lease's own, or another's: any sync proves as much): from
// the latest lease sync sent on c at least leaseProofGap before it (c.mu
// held).
func (c *wireConn) syncAnswered(r sentRequest, code int32) {
	if r.lease {
		c.syncsInFlight--
	}
	sent := r.at
	if code != 0 {
		return
	}
	limit := sent.Add(-leaseProofGap(c.w.timeout()))
	i := len(c.syncs) - 1
	for i >= 0 && c.syncs[i].After(limit) {
		i--
	}
	if i < 0 {
		return
	}
	c.w.vouch(c.syncs[i])
	c.syncs = c.syncs[i:]
}

// renewLease sends a sync every syncInterval on the connection in use,
// once it is ready, until Close.
func (s *Conn) renewLease() {
	defer close(s.renewing)
	s.every(syncInterval, func() {
		if c := s.wire.readyConn(); c != nil {
			c.sendSync()
		}
	})
}

// readyConn returns the connection in use if it is ready, else nil.
func (w *wireTracker) readyConn() *wireConn {
	w.mu.Lock()
	c := w.current
	w.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c.ready:
		return c
	default:
		return nil
	}
}
