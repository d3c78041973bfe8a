package zkconn

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/retry"
)

// Requests whose replies the session reads itself (create2, see
// create2.go; reads, see watch.go and datawatch.go) carry an xid of their
// own, unique among the session's requests in flight: ZooKeeper matches a
// committed write to the session's pending request by xid, and the reply
// is found by it here. The xids are negative, so go-zookeeper ignores the
// replies, and stay clear of the reserved ones (-1 notification, -2 ping,
// -4 auth, -8 set watches) and of xidInjected.
const (
	xidCallBase  = -0x10000000
	xidCallRange = 0x40000000
)

// callBound bounds the wait for the reply to a request the session wrote,
// given the negotiated session timeout t. The connection's own liveness
// (go-zookeeper's pings and read deadline) ends a wait on a dead server;
// the bound only stops a reply that never comes on a live connection from
// holding its caller forever.
func callBound(t time.Duration) time.Duration { return max(4*t, 10*time.Second) }

// xidInjected is the xid of the layer's watch removals, whose replies it
// does not read.
const xidInjected int32 = -0x5a5a

// isLayerXid reports whether xid is one of the layer's own.
func isLayerXid(xid int32) bool {
	return xid == xidInjected || (int64(xid) <= xidCallBase && int64(xid) > xidCallBase-xidCallRange)
}

// nextCallXid returns a fresh xid for a request read by the session.
func (w *wireTracker) nextCallXid() int32 {
	n := w.callSeq.Add(1)
	return int32(xidCallBase - int64(n%xidCallRange))
}

// pendingCall is a request written by the session whose reply it awaits.
type pendingCall struct {
	conn  *wireConn
	xid   int32
	reply chan []byte // the reply's whole body (header first); buffered

	// replied is set when the reply is read off the wire, before
	// go-zookeeper handles any frame after it (watch events included).
	replied atomic.Bool
}

// newPendingCall returns a call for a request with xid, not yet sent.
func newPendingCall(xid int32) *pendingCall {
	return &pendingCall{xid: xid, reply: make(chan []byte, 1)}
}

// call writes frame (whose xid is p.xid) on c, behind every frame the
// session queued before (see wirequeue.go), and registers p for its reply;
// false if the write failed (the request's fate is then unknown).
func (c *wireConn) call(p *pendingCall, frame []byte) (ok, unsent bool) {
	c.w.order.Lock()
	defer c.w.order.Unlock()
	c.w.drainLocked()
	p.conn = c
	c.mu.Lock()
	c.calls[p.xid] = p
	_, op, _ := jute.RequestHeader(frame)
	c.pending[p.xid] = sentRequest{at: time.Now(), op: op}
	c.mu.Unlock()
	if ok, unsent := c.send(frame); !ok {
		p.forget()
		c.mu.Lock()
		delete(c.pending, p.xid)
		c.mu.Unlock()
		return false, unsent
	}
	return true, false
}

// waitCtx returns the reply body, or false if the connection closed, d
// passed or ctx ended before it came: the request's fate is then unknown.
func (p *pendingCall) waitCtx(ctx context.Context, d time.Duration) ([]byte, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case b := <-p.reply:
		return b, true
	case <-p.conn.closed:
	case <-t.C:
	case <-ctx.Done():
	}
	p.forget()
	select { // a reply read just before the close still counts
	case b := <-p.reply:
		return b, true
	default:
		return nil, false
	}
}

// forget stops waiting for the reply. The request stays in flight on its
// connection (c.pending) until the server answers it: a request given up
// on is still one the server owes an answer, for the request deadline (see
// deadline.go) and, once answered, for the lease.
func (p *pendingCall) forget() {
	p.conn.mu.Lock()
	delete(p.conn.calls, p.xid)
	p.conn.mu.Unlock()
}

// wantsBody reports whether head is the reply to a pending call (c.mu held).
func (c *wireConn) wantsBody(head []byte) bool {
	if !c.established.Load() {
		return true // the connect response, for the session's password
	}
	_, ok := c.calls[jute.ReplyXid(head)]
	return ok
}

// deliver hands a reply to its pending call, if any (c.mu held).
func (c *wireConn) deliver(xid int32, body []byte) {
	if p, ok := c.calls[xid]; ok {
		delete(c.calls, xid)
		p.replied.Store(true)
		p.reply <- append([]byte(nil), body...)
	}
}

// exchange writes frame, the request of call, on the connection once it is
// ready, and waits for the reply; both waits end with ctx.
func (s *Conn) exchange(ctx context.Context, call *pendingCall, frame []byte) ([]byte, error) {
	if err := s.write(ctx, call, frame, true); err != nil {
		return nil, err
	}
	return s.await(ctx, call)
}

// write writes frame, the request of call, on the connection once it is
// ready, at most a session timeout later (see awaitReady for redial). It
// fails with ctx's error, the session's end cause (an *AuthError: its
// credentials refused, or a SASL login required) once it is over for
// good, ErrClosed (with redial, after Close), one
// wrapping zk.ErrSessionExpired as soon as the session the call is bound
// to (see binding) has expired, or an
// error wrapping zk.ErrConnectionClosed: no connection was ready, or the
// write failed (the request may then have reached the server).
//
// A connection found ready but closed before the frame was written (it was
// being replaced), or whose socket took no byte of it, never carried the
// request: the write waits for the next
// one, within the same bound, instead of failing a request the server
// never saw.
func (s *Conn) write(ctx context.Context, call *pendingCall, frame []byte, redial bool) error {
	t := s.wire.timeout()
	deadline := time.Now().Add(t)
	id, over := s.binding()
	var b retry.Backoff // until the closed connection is replaced as current
	for {
		if err := s.wire.auth.cause(); err != nil {
			return err // no connection is made again
		}
		c := s.wire.awaitReady(ctx, over, time.Until(deadline), redial)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case c == nil && redial && s.isClosed():
			return ErrClosed
		case c == nil && s.wire.auth.cause() != nil:
			return s.wire.auth.cause()
		case id != 0 && (isDone(over) || c != nil && c.sessionOf() != id):
			return deadSession(id)
		case c == nil:
			return fmt.Errorf("no connection ready (waited at most %v): %w", t, zk.ErrConnectionClosed)
		}
		ok, unsent := c.call(call, frame)
		switch {
		case ok:
			return nil
		case !unsent || time.Now().After(deadline):
			return fmt.Errorf("write: %w", zk.ErrConnectionClosed)
		}
		if !b.Wait(ctx) {
			return ctx.Err()
		}
	}
}

// await waits for the reply to call, at most callBound of the session
// timeout. It fails with ctx's error; with the session's end cause (an
// *AuthError) when the server answered this call, or another request of
// the session, that it requires a SASL login (saslrequired.go), or the
// session's credentials were refused meanwhile; or with one wrapping
// zk.ErrConnectionClosed when the connection closed or the bound passed
// first: the request's fate is then unknown.
func (s *Conn) await(ctx context.Context, call *pendingCall) ([]byte, error) {
	body, ok := call.waitCtx(ctx, callBound(s.wire.timeout()))
	switch {
	case ok && !loginRequiredReply(body):
		return body, nil
	case ok && s.wire.auth.cause() != nil:
		return nil, s.wire.auth.cause()
	case ok:
		return body, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case s.wire.auth.cause() != nil:
		return nil, s.wire.auth.cause()
	}
	return nil, fmt.Errorf("no reply: %w", zk.ErrConnectionClosed)
}

// loginRequiredReply reports whether body is a reply of code
// SESSIONCLOSEDREQUIRESASLAUTH.
func loginRequiredReply(body []byte) bool {
	h, ok := jute.DecodeReplyHeader(body)
	return ok && h.Err == jute.CodeSessionClosedRequireSASL
}

// A call is bound to the session current when it starts: one that waits
// for a connection while that session expires fails at once with
// zk.ErrSessionExpired (it cannot succeed: a write meant for the old
// session must not go out on the new one, and waiting out its bound only
// delays the caller's re-entry in the new session), as does one that finds
// the next connection serving another session. A call started while there
// is no session is bound to the next one.

// binding returns the current session id (0: none) and a channel closed
// when that session expires or the Conn is closed.
func (s *Conn) binding() (int64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.over
}

// endBindingLocked closes the channel of the calls bound to the current
// session (s.mu held); next, if true, opens one for the next session.
func (s *Conn) endBindingLocked(next bool) {
	if !isDone(s.over) {
		close(s.over)
	}
	if next {
		s.over = make(chan struct{})
	}
}

// deadSession is the error of a call bound to session id, which expired.
func deadSession(id int64) error {
	return fmt.Errorf("session 0x%x expired before the request was sent: %w", id, zk.ErrSessionExpired)
}

// isDone reports whether ch is closed.
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sessionOf returns the session established on the connection (0 before
// its connect response).
func (c *wireConn) sessionOf() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}
