package zkconn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// Which ensemble a server serves, from its data: a session on it reads
// the Stat of each of this process's marks (marks.go) with exists, which
// no ACL restricts. It holds one with the same czxid and ctime: it serves
// the ensemble this process saw. It holds none of them (each missing, or
// created by another transaction): it serves another ensemble. A server
// that does not answer tells nothing. ensemble.go says when the layer
// asks.

// identity is what a server's data says of its ensemble.
type identity uint8

const (
	identityUnknown identity = iota // not learnt: the server did not answer, or refused the session
	identityOurs                    // it holds a mark, with its czxid and ctime
	identityForeign                 // it holds none of the marks
)

// xidIdentity is the xid of the exists requests of the check; they are
// written before go-zookeeper sees the connection's connect response, and
// their replies are read by the check itself.
const xidIdentity int32 = -0x5a5c

// maxIdentityReply bounds a reply frame the check reads.
const maxIdentityReply = 1 << 16

// askMarks asks the server on rw, a connection whose session was just
// established and that carries nothing else, for each mark in turn, the
// latest first. It returns identityOurs with the first mark it holds,
// identityForeign when it holds none, identityUnknown with the error of
// a read or write that failed, or of a reply that is no Stat (a server
// requiring a SASL login, say).
func askMarks(rw io.ReadWriter, marks []mark, creds []Credential) (identity, mark, error) {
	if err := replayAuth(rw, creds); err != nil {
		return identityUnknown, mark{}, err
	}
	for _, m := range marks {
		if _, err := rw.Write(jute.ReadRequest(xidIdentity, jute.OpExists, m.path, false)); err != nil {
			return identityUnknown, m, fmt.Errorf("send exists %s: %w", m.path, err)
		}
		h, stat, err := readIdentityReply(rw)
		switch {
		case err != nil:
			return identityUnknown, m, fmt.Errorf("read exists %s: %w", m.path, err)
		case h.Err == jute.CodeNoNode:
		case h.Err != 0:
			return identityUnknown, m, &CodeError{Op: "exists", Code: h.Err}
		case stat.Czxid == m.czxid && stat.Ctime == m.ctime:
			return identityOurs, m, nil
		}
	}
	return identityForeign, mark{}, nil
}

// replayAuth sends the session's credentials (Config.Auth) and reads
// their answers, for a server that requires them before any request
// (ZooKeeper 3.7's enforce.auth.enabled).
func replayAuth(rw io.ReadWriter, creds []Credential) error {
	for _, cr := range creds {
		e := jute.NewRequest(jute.XidAuth, jute.OpSetAuth, 12+len(cr.Scheme)+len(cr.Auth))
		e.Int32(0)
		e.String(cr.Scheme)
		e.Buffer([]byte(cr.Auth))
		if _, err := rw.Write(e.Frame()); err != nil {
			return fmt.Errorf("send auth %s: %w", cr.Scheme, err)
		}
		for {
			body, err := jute.ReadFrame(rw, maxIdentityReply)
			if err != nil {
				return fmt.Errorf("read auth %s: %w", cr.Scheme, err)
			}
			h, ok := jute.DecodeReplyHeader(body)
			if !ok || h.Xid != jute.XidAuth {
				continue
			}
			if h.Err != 0 {
				return &CodeError{Op: "auth", Code: h.Err}
			}
			break
		}
	}
	return nil
}

// readIdentityReply reads frames until the reply to an identity request:
// its header, and its Stat when it has one.
func readIdentityReply(r io.Reader) (jute.ReplyHeader, *zk.Stat, error) {
	for {
		body, err := jute.ReadFrame(r, maxIdentityReply)
		if err != nil {
			return jute.ReplyHeader{}, nil, err
		}
		h, ok := jute.DecodeReplyHeader(body)
		if !ok {
			return h, nil, fmt.Errorf("reply of %d bytes", len(body))
		}
		if h.Xid != xidIdentity {
			continue // nothing else is asked on the connection; skip what is not ours
		}
		if h.Err != 0 {
			return h, nil, nil
		}
		if len(body) < jute.HeaderLen+jute.StatLen {
			return h, nil, fmt.Errorf("exists reply of %d bytes", len(body))
		}
		return h, jute.DecodeStat(body[jute.HeaderLen:]), nil
	}
}

// errProbeRefused: the server did not grant the probe a session.
var errProbeRefused = errors.New("the server granted no session to the identity probe")

// probeServer opens a session on the server at addr ("ip:port", the
// address entry reached), logs it in with SASL when configured, asks it
// for the marks and closes the session. The whole exchange is bounded by
// a handshake bound and an exchange bound.
func (w *wireTracker) probeServer(entry, addr string, marks []mark) (identity, mark, error) {
	if w.probeDial == nil {
		return identityUnknown, mark{}, errors.New("no dialer for the identity probe")
	}
	bound := 2 * w.handshakeBound()
	if w.sasl != nil {
		bound += w.saslBound()
	}
	conn, err := w.probeDial("tcp", entry, addr, bound)
	if err != nil {
		return identityUnknown, mark{}, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(bound))
	if err := openProbeSession(conn, w.lastZxid.Load(), w.timeout()); err != nil {
		return identityUnknown, mark{}, err
	}
	if w.sasl != nil {
		if err := w.probeLogin(conn, addr); err != nil {
			return identityUnknown, mark{}, err
		}
	}
	id, m, err := askMarks(conn, marks, w.digest)
	_, _ = conn.Write(closeSessionFrame()) // the probe's session ends now, not after its timeout
	return id, m, err
}

// probeLogin logs the probe's session in with SASL, and counts a refusal
// of the credentials as a refusal of the session's (saslservers.go): a
// server that says the session expired and refuses the credentials ends
// it for them once the ensemble as a whole refuses.
func (w *wireTracker) probeLogin(conn net.Conn, server string) error {
	start := time.Now()
	err := saslLogin(conn, server, w.sasl)
	ae := (*AuthError)(nil)
	switch {
	case err == nil:
		w.saslTook(server, time.Since(start))
	case errors.As(err, &ae) && w.saslRefusedBy(server):
		w.auth.set(err)
		if f := w.onRefused; f != nil {
			f()
		}
	case ae != nil:
		w.log.Warn().Str("server", server).Err(err).Msg("zookeeper server refused the SASL credentials; trying the others")
	}
	return err
}

// openProbeSession asks the server on conn for a new session, presenting
// lastZxid: a server behind this process's view refuses it.
func openProbeSession(conn net.Conn, lastZxid int64, timeout time.Duration) error {
	if _, err := conn.Write(jute.ConnectRequest(lastZxid, timeout, 0, nil)); err != nil {
		return fmt.Errorf("send connect request: %w", err)
	}
	body, err := jute.ReadFrame(conn, maxConnectResponse)
	if err != nil {
		return fmt.Errorf("read connect response: %w", err)
	}
	if r, ok := jute.DecodeConnectResponse(body); !ok || r.SessionID == 0 {
		return errProbeRefused
	}
	return nil
}

// closeSessionFrame is a closeSession request.
func closeSessionFrame() []byte { return jute.NewRequest(xidIdentity, jute.OpCloseSession, 0).Frame() }

// checkIdentity runs on a connection whose connect response just granted
// a new session, before go-zookeeper sees it (and after the SASL login):
// when this process has marks, the server must hold one. A server of
// another ensemble is refused: the session it granted is closed there,
// the connection too, and go-zookeeper tries the next server.
func (c *wireConn) checkIdentity(marks []mark) error {
	if len(marks) == 0 {
		return nil // forgotten meanwhile: the ensemble was wiped
	}
	_ = c.Conn.SetDeadline(time.Now().Add(max(c.bound, c.w.handshakeBound())))
	defer c.Conn.SetDeadline(time.Time{}) // go-zookeeper sets its own before each read and write
	id, _, err := askMarks(c.Conn, marks, c.w.digest)
	switch id {
	case identityOurs:
		return nil
	case identityForeign:
		_, _ = c.Conn.Write(closeSessionFrame())
		return c.w.refuseForeign(c.server(), marks, "granted a new session")
	}
	return fmt.Errorf("%w: server %s granted a new session, but its data could not be read to tell its ensemble: %w",
		ErrNoSession, c.server(), err)
}

// server returns the address the connection reached ("ip:port"); the
// entry dialled when it has none.
func (c *wireConn) server() string {
	if a := c.Conn.RemoteAddr(); a != nil {
		return a.String()
	}
	return c.addr
}

// confirmIdentity checks the server of a new session (checkIdentity) and
// then records the session as any handshake, or closes the connection and
// returns the error go-zookeeper's read fails with.
func (c *wireConn) confirmIdentity() error {
	if err := c.checkIdentity(c.w.marks.list()); err != nil {
		_ = c.Close()
		return err
	}
	r := c.granted
	c.w.handshake(r.SessionID, r.Timeout, r.Password, c.connectSent)
	c.mu.Lock()
	c.identityDue = false
	c.checkReady()
	c.mu.Unlock()
	return nil
}
