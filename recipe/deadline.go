package recipe

import "time"

// The request deadline. ZooKeeper answers a session's requests in order,
// and go-zookeeper v1.0.4 waits for each answer without limit: a server
// that still answers pings (so neither side sees the connection fail) but
// no longer answers requests, as when its request pipeline is stuck,
// would wedge every campaign and read of the session while Connected
// stays true. The session therefore watches the requests in flight on the
// connection in use, go-zookeeper's and its own (wireConn.pending, which
// keeps a request the caller stopped waiting for until it is answered):
// when the oldest has gone unanswered for longer than the negotiated
// session timeout, it logs a warning naming the server and closes that
// connection. go-zookeeper then reconnects to the next server, the session
// lives on, and candidates and observers re-read as after any connection
// loss. (A server that stops answering pings too is left by go-zookeeper
// itself, after two thirds of the session timeout.)
//
// ZooKeeper's Java client has the like since 3.6 (ZOOKEEPER-2251): the
// client property zookeeper.request.timeout, off by default (0), fails
// requests unanswered within it with a connection loss.

// sentRequest is a request written on a connection and not yet answered.
type sentRequest struct {
	at time.Time // when it was written
	op int32     // ZooKeeper op code
}

// watchRequests checks the request deadline four times per session
// timeout until Close.
func (s *Session) watchRequests() {
	defer close(s.watchdog)
	for {
		t := time.NewTimer(s.wire.timeout() / 4)
		select {
		case <-s.done:
			t.Stop()
			return
		case <-t.C:
		}
		s.checkRequests(time.Now())
	}
}

// checkRequests closes the connection in use if its oldest request in
// flight is older than the session timeout.
func (s *Session) checkRequests(now time.Time) {
	c, r, ok := s.wire.oldestRequest()
	if !ok {
		return
	}
	limit := s.wire.timeout()
	if age := now.Sub(r.at); age > limit {
		s.log.Warn().Str("server", c.RemoteAddr().String()).Int32("op", r.op).
			Dur("age", age).Dur("limit", limit).Str("reason", "request_timeout").
			Msg("zookeeper server left a request unanswered past the session timeout; reconnecting to another server")
		_ = c.Close()
	}
}

// oldestRequest returns the established connection in use and its oldest
// request in flight; ok is false if there is none.
func (w *wireTracker) oldestRequest() (c *wireConn, oldest sentRequest, ok bool) {
	w.mu.Lock()
	c = w.current
	w.mu.Unlock()
	if c == nil || !c.established.Load() {
		return nil, sentRequest{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.pending {
		if !ok || r.at.Before(oldest.at) {
			oldest, ok = r, true
		}
	}
	return c, oldest, ok
}
