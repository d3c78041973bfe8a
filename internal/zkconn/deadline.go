package zkconn

import "time"

// The request deadline. ZooKeeper answers a session's requests in order,
// and go-zookeeper v1.0.4 waits for each answer without limit: a server
// that still answers pings (so neither side sees the connection fail) but
// no longer answers requests, as when its request pipeline is stuck,
// would wedge every campaign and read of the session while Connected
// stays true. The session therefore watches the requests in flight on the
// connection in use, go-zookeeper's and its own (wireConn.pending, which
// keeps a request the caller stopped waiting for until it is answered):
// when a whole negotiated session timeout has passed since the oldest was
// sent and since any request was last answered on that connection, it
// logs a warning naming the server and closes that connection.
// go-zookeeper then reconnects to the next server, the session lives on,
// and candidates and observers re-read as after any connection loss. A
// server working through a long backlog answers as it goes and is left
// alone; one that stops answering pings too is left by go-zookeeper
// itself, after two thirds of the session timeout.
//
// ZooKeeper's Java client has the like since 3.6 (ZOOKEEPER-2251): the
// client property zookeeper.request.timeout, off by default (0), fails a
// request unanswered within it with a connection loss.

// sentRequest is a request written on a connection and not yet answered.
type sentRequest struct {
	at    time.Time // when it was written
	op    int32     // ZooKeeper op code
	lease bool      // a sync of the lease clock (leaseclock.go)
}

// stall is a connection whose requests wait: its oldest request in flight
// and since when no request has been answered.
type stall struct {
	conn   *wireConn
	oldest sentRequest
	since  time.Time // the later of oldest.at and the latest answer
}

// watchRequests checks the request deadline four times per session
// timeout (the requested one until a session is negotiated) until Close.
func (s *Conn) watchRequests() {
	defer close(s.watchdog)
	s.every(func(t time.Duration) time.Duration { return t / 4 }, func() { s.checkRequests(time.Now()) })
}

// every calls fn every period(session timeout), following changes of the
// timeout (the requested one until a session is negotiated), until Close.
func (s *Conn) every(period func(time.Duration) time.Duration, fn func()) {
	p := period(s.wire.timeout())
	tick := time.NewTicker(p)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
			fn()
		}
		if q := period(s.wire.timeout()); q != p {
			p = q
			tick.Reset(p)
		}
	}
}

// checkRequests closes the connection in use if its requests have waited
// for longer than the session timeout with none answered.
func (s *Conn) checkRequests(now time.Time) {
	st, ok := s.wire.stalled()
	limit := s.wire.timeout()
	if !ok || now.Sub(st.since) <= limit {
		return
	}
	s.log.Warn().Str("server", st.conn.RemoteAddr().String()).Int32("op", st.oldest.op).
		Dur("age", now.Sub(st.oldest.at)).Dur("limit", limit).Str("reason", "request_timeout").
		Msg("zookeeper server answered no request for a session timeout; reconnecting to another server")
	_ = st.conn.Close()
}

// stalled returns the established connection in use with its oldest
// request in flight; ok is false if there is none.
func (w *wireTracker) stalled() (st stall, ok bool) {
	w.mu.Lock()
	c := w.current
	w.mu.Unlock()
	if c == nil || !c.established.Load() {
		return stall{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.pending {
		if !ok || r.at.Before(st.oldest.at) {
			st.oldest, ok = r, true
		}
	}
	st.conn, st.since = c, st.oldest.at
	if c.answered.After(st.since) {
		st.since = c.answered
	}
	return st, ok
}
