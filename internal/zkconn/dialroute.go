package zkconn

import (
	"errors"
	"net"
	"sync"
	"time"
)

// dialEntry is the dialer go-zookeeper calls (under the wire tracker's,
// wire.go) with the entry the host provider chose (hosts.go). It takes the
// pause when one is due, dials members on trial under the short bound, and
// tells the host provider how their dials fared.
func (s *Conn) dialEntry(network, entry string, timeout time.Duration) (net.Conn, error) {
	if s.hosts.takePause() {
		d := roundPause(s.wire.timeout())
		s.log.Debug().Str("server", entry).Dur("pause", d).
			Msg("no zookeeper server answered a whole round: pausing before the next")
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-s.dialCtx.Done():
			t.Stop()
			return nil, ErrClosed
		}
	}
	if !s.hosts.onTrial(entry) {
		return s.resolver.dial(network, entry, timeout)
	}
	bound := min(timeout, trialBound(s.wire.timeout()))
	start := time.Now()
	c, err := s.resolver.dial(network, entry, bound)
	if err != nil {
		if unreachable(err) {
			s.hosts.tried(entry, false)
		}
		return nil, err
	}
	return &trialConn{Conn: c, entry: entry, limit: start.Add(bound), hosts: s.hosts}, nil
}

// isEstablished reports whether the first session was established.
func (s *Conn) isEstablished() bool {
	select {
	case <-s.established:
		return true
	default:
		return false
	}
}

// roundPause is the pause after a round of servers in which none answered:
// a twentieth of the session timeout, 50ms to 1s. go-zookeeper's own pause
// is a second whatever the session timeout: with 2s sessions, half of it
// spent idle while a server restarted elsewhere (a rolling restart) is
// ready.
func roundPause(sessionTimeout time.Duration) time.Duration {
	return min(max(sessionTimeout/20, 50*time.Millisecond), time.Second)
}

// trialBound is how long a member on trial may take to connect and
// answer: a twentieth of the session timeout, 100ms to 1s. A member the
// client cannot route to then costs a reconnect that much, twice, before
// it is dropped, where the handshake's bound (wire.go) is a third of the
// session timeout.
func trialBound(sessionTimeout time.Duration) time.Duration {
	return min(max(sessionTimeout/20, 100*time.Millisecond), time.Second)
}

// unreachable reports whether a dial's error says the address may not be
// reached: it timed out, or its name does not resolve. A refused
// connection proves a route.
func unreachable(err error) bool {
	var re *ResolveError
	return isTimeout(err) || errors.As(err, &re)
}

// trialConn is a connection to a member on trial: until it has read a
// byte (the connect response) its deadlines are clamped to limit, and the
// host provider is told whether it answered or timed out.
type trialConn struct {
	net.Conn
	entry string
	limit time.Time
	hosts *serverList

	mu       sync.Mutex
	proven   bool // it answered: deadlines are no longer clamped
	reported bool // the outcome was told to the host provider
}

func (c *trialConn) clamp(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proven || (!t.IsZero() && t.Before(c.limit)) {
		return t
	}
	return c.limit
}

// SetDeadline clamps the deadline until the member answered.
func (c *trialConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.clamp(t)) }

// SetReadDeadline clamps the deadline until the member answered.
func (c *trialConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.clamp(t)) }

// SetWriteDeadline clamps the deadline until the member answered.
func (c *trialConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.clamp(t)) }

// Read reads, reporting the member's first answer or its timeout.
func (c *trialConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	report := !c.reported && (n > 0 || isTimeout(err))
	c.reported = c.reported || report
	c.proven = c.proven || n > 0
	c.mu.Unlock()
	if report {
		c.hosts.tried(c.entry, n > 0)
	}
	return n, err
}

// Write writes, reporting a timeout before the member answered.
func (c *trialConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.mu.Lock()
	report := !c.reported && isTimeout(err)
	c.reported = c.reported || report
	c.mu.Unlock()
	if report {
		c.hosts.tried(c.entry, false)
	}
	return n, err
}
