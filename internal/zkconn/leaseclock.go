package zkconn

import (
	"sync"
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
//     first, and one that reached the follower at least half a tick before
//     it was reported to the leader in a heartbeat answer that travelled
//     ahead of the sync. What the client can prove of arrivals is that an
//     earlier sync reached the follower before its answer came back, and
//     that the later sync reached it after it was sent: so the answer to a
//     sync S renews the lease from the send time of the latest earlier
//     sync whose answer arrived at least leaseProofGap (an eighth of the
//     session timeout) before S was sent. Gaps between sends prove
//     nothing: a stalled link (a blackhole, TCP retransmission, the
//     follower's pause) delivers two syncs sent far apart together, and
//     if the follower then loses the quorum leader before its next
//     heartbeat answer, the leader last heard of the session before the
//     stall. An eighth of the timeout is half a tick or more for sessions
//     of at least four ticks (ZooKeeper's default bounds are 2 to 20); on
//     shorter ones the leader may have heard of the session up to a
//     quarter of a tick earlier than the lease assumes, which the margin
//     must cover.
//
// The lease belongs to the session it was earned for: a connect response
// granting a new session starts a lease of that session, and the lease of
// the old one (which its leaderships are checked against until they learn
// of the expiry) is never renewed by it (LeaseDeadline takes the id).
//
// Pings and reads a follower answers keep the connection, not the lease.
// The session sends one sync every syncInterval i = T/6 while connected
// (not per election): 6 requests per session timeout T, 0.6 a second on
// the default 10 s session. With a round trip r, the answer to sync n
// proves from sync n−j, j = ceil((T/8 + r)/i): j = 1 while r ≤ T/24
// (83 ms at T = 2 s, 417 ms at 10 s), 2 while r ≤ T/24 + T/6. Just before
// each renewal (the answer to sync n+1) the lease with margin m then has
// T − m − (j+1)·i − r left: on the default margin m = T/4 and j = 1 that
// is 5T/12 − r; with j = 2, T/4 − r.

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

// leaseState is the lease clock's state (under its own mutex): the
// session it was earned for and the latest instant the quorum leader is
// known to have heard of that session after.
type leaseState struct {
	mu   sync.Mutex
	of   int64
	from time.Time
}

// vouch records that the quorum leader heard of session id after t; a
// lease of another session is replaced.
func (w *wireTracker) vouch(id int64, t time.Time) {
	l := &w.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != l.of || t.After(l.from) {
		l.of, l.from = id, t
	}
}

// leaseDeadline returns the instant (monotonic) before which the server
// cannot have expired session id: the latest instant the quorum leader is
// known to have heard of it after, plus the timeout. ok is false while
// nothing vouches for that session (another session earned the lease, or
// none did).
func (w *wireTracker) leaseDeadline(id int64) (time.Time, bool) {
	l := &w.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if id == 0 || id != l.of || l.from.IsZero() {
		return time.Time{}, false
	}
	return l.from.Add(w.timeout()), true
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

// answeredSync is a sync answered on a connection: when it was sent and
// when its answer arrived (it reached the server in between).
type answeredSync struct{ sent, answered time.Time }

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

// syncAnswered renews the lease of the connection's session from the
// answer, arrived at now with error code code, to the sync r (the lease's
// own, or another's: any sync proves as much): from the send time of the
// latest sync answered on c at least leaseProofGap before r was sent
// (c.mu held). r is then such an earlier sync for later answers.
func (c *wireConn) syncAnswered(r sentRequest, code int32, now time.Time) {
	if r.lease {
		c.syncsInFlight--
	}
	if code != 0 {
		return
	}
	limit := r.at.Add(-leaseProofGap(c.w.timeout()))
	i := len(c.syncs) - 1
	for i >= 0 && c.syncs[i].answered.After(limit) {
		i--
	}
	if i >= 0 {
		c.w.vouch(c.session, c.syncs[i].sent)
		c.syncs = c.syncs[i:]
	}
	c.syncs = append(c.syncs[max(len(c.syncs)-2*maxSyncsInFlight+1, 0):], answeredSync{sent: r.at, answered: now})
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
