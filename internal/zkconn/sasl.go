package zkconn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/sasl"
)

// ZooKeeper's SASL exchange: after the connect response, the client sends
// sasl requests (op 102) carrying its tokens and the server answers each
// with its own (SetSASLResponse), until the mechanism completes; a refusal
// is a reply with the AUTHFAILED error code, after which the server closes
// the connection. The session runs it on the connection itself, inside
// go-zookeeper's read of the connect response (wireConn.Read), so no other
// request can reach the server first, on every connection.
const (
	opSASL  = 102
	xidSASL = -0x5a5b // the server echoes it; go-zookeeper never sees these replies
	// codeAuthFailed is ZooKeeper's AUTHFAILED reply code.
	codeAuthFailed = -115

	// saslService and saslServerName make the DIGEST-MD5 digest-uri that
	// ZooKeeper's server checks ("zookeeper/zk-sasl-md5").
	saslService    = "zookeeper"
	saslServerName = "zk-sasl-md5"
	// maxSASLRounds bounds the exchange (DIGEST-MD5 takes two).
	maxSASLRounds = 4
	// maxSASLReply bounds a reply frame read during the exchange.
	maxSASLReply = 1 << 16
)

// SASLCredential is a SASL DIGEST-MD5 user and password (Config.SASL).
type SASLCredential struct{ User, Password string }

// AuthError is a SASL authentication with a server that failed for a
// reason a retry does not cure: the server refused the credentials
// (zk.ErrAuthFailed), has no SASL configured, or could not prove it knows
// the password (sasl.ErrServerNotVerified and the other errors of
// internal/sasl); or the server requires a SASL login the session did not
// make, or one that does not satisfy it: it answered a request with
// SESSIONCLOSEDREQUIRESASLAUTH (Err a *CodeError of code
// jute.CodeSessionClosedRequireSASL, -124; Mechanism and User empty
// without Config.SASL; saslrequired.go). errors.Is(err, ErrAuthFailed)
// holds for it.
type AuthError struct {
	Server    string // "host:port"
	Mechanism string // "DIGEST-MD5"; empty: no login was made
	User      string
	Err       error
}

func (e *AuthError) Error() string {
	if e.Mechanism == "" {
		return fmt.Sprintf("no SASL login at ZooKeeper server %s: %v", e.Server, e.Err)
	}
	return fmt.Sprintf("SASL %s login as %q at ZooKeeper server %s: %v", e.Mechanism, e.User, e.Server, e.Err)
}

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// Is reports whether target is ErrAuthFailed.
func (e *AuthError) Is(target error) bool { return target == ErrAuthFailed }

// errNoSASL: the server answered the first token with nothing, as a server
// without a JAAS Server section does.
var errNoSASL = errors.New("the server offers no SASL (is a JAAS Server section with DigestLoginModule configured?)")

// authFailure remembers the first credentials refusal of a session.
type authFailure struct {
	once sync.Once
	err  error
	over chan struct{} // closed at the first refusal
}

func newAuthFailure() *authFailure { return &authFailure{over: make(chan struct{})} }

// set records err (an *AuthError), once.
func (a *authFailure) set(err error) {
	a.once.Do(func() { a.err = err; close(a.over) })
}

// cause returns the recorded refusal, or nil.
func (a *authFailure) cause() error {
	select {
	case <-a.over:
		return a.err
	default:
		return nil
	}
}

// loginSASL runs the SASL exchange on a connection whose connect response
// was just read, before go-zookeeper sees that response; then the
// connection is ready. A refusal closes the connection, and is recorded
// for the session (no connection is made again) once the ensemble as a
// whole refused (saslservers.go).
func (c *wireConn) loginSASL() error {
	bound, start := c.w.saslBound(), time.Now()
	err := c.authenticateSASL(c.w.sasl, bound)
	if err != nil {
		ae := (*AuthError)(nil)
		switch {
		case errors.As(err, &ae) && c.w.saslRefusedBy(c.server()):
			c.w.auth.set(err) // Connect returns it, or the session ends (authRefused)
			if f := c.w.onRefused; f != nil {
				f()
			}
		case ae != nil:
			c.w.log.Warn().Str("server", c.server()).Str("entry", c.addr).Err(err).Msg("zookeeper server refused the SASL credentials; trying the others")
		case isTimeout(err):
			c.w.saslTimedOut(bound)
		}
		_ = c.Close()
		return err
	}
	c.w.saslTook(c.server(), time.Since(start))
	c.mu.Lock()
	c.saslDue = false
	c.checkReady()
	c.mu.Unlock()
	return nil
}

// authenticateSASL runs the SASL DIGEST-MD5 exchange on the connection,
// within bound. A transport failure is returned as is (the connection is
// retried like any other); a refusal is an *AuthError.
func (c *wireConn) authenticateSASL(cred *SASLCredential, bound time.Duration) error {
	_ = c.Conn.SetDeadline(time.Now().Add(bound))
	defer c.Conn.SetDeadline(time.Time{}) // go-zookeeper sets its own before each read and write
	return saslLogin(c.Conn, c.RemoteAddr().String(), cred)
}

// saslLogin runs the SASL DIGEST-MD5 exchange on conn, to server, within
// conn's deadline: a transport failure is returned as is, a refusal is an
// *AuthError.
func saslLogin(conn net.Conn, server string, cred *SASLCredential) error {
	mech, err := sasl.NewDigestMD5(cred.User, cred.Password, saslService, saslServerName)
	if err != nil {
		return err
	}
	refused := func(err error) error {
		return &AuthError{Server: server, Mechanism: "DIGEST-MD5", User: cred.User, Err: err}
	}
	token := []byte{} // DIGEST-MD5 has no initial response
	for round := 1; round <= maxSASLRounds; round++ {
		if _, err := conn.Write(saslFrame(token)); err != nil {
			return fmt.Errorf("send SASL token: %w", err)
		}
		reply, code, err := readSASLReply(conn)
		if err != nil {
			return fmt.Errorf("read SASL reply: %w", err)
		}
		if code != 0 {
			return refused(zkError(code))
		}
		if round == 1 && len(reply) == 0 {
			return refused(errNoSASL)
		}
		next, done, err := mech.Step(reply)
		if err != nil {
			return refused(err)
		}
		if done {
			return nil
		}
		token = next
	}
	return refused(fmt.Errorf("no outcome after %d rounds", maxSASLRounds))
}

// zkError maps a reply's error code to go-zookeeper's error.
func zkError(code int32) error {
	if code == codeAuthFailed {
		return zk.ErrAuthFailed
	}
	return fmt.Errorf("ZooKeeper error code %d", code)
}

// saslFrame encodes a sasl request carrying token: length, xid, op, token.
func saslFrame(token []byte) []byte {
	f := make([]byte, 0, 16+len(token))
	f = binary.BigEndian.AppendUint32(f, uint32(12+len(token)))
	xid := int32(xidSASL)
	f = binary.BigEndian.AppendUint32(f, uint32(xid))
	f = binary.BigEndian.AppendUint32(f, opSASL)
	f = binary.BigEndian.AppendUint32(f, uint32(len(token)))
	return append(f, token...)
}

// readSASLReply reads one reply frame: header (xid, zxid, error code) and,
// without an error, the server's token (a length of -1 is none).
func readSASLReply(r io.Reader) (token []byte, code int32, err error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, 0, err
	}
	n := int(binary.BigEndian.Uint32(lenBuf[:]))
	if n < 16 || n > maxSASLReply {
		return nil, 0, fmt.Errorf("reply frame of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, 0, err
	}
	if xid := int32(binary.BigEndian.Uint32(body)); xid != xidSASL {
		return nil, 0, fmt.Errorf("reply xid %d, want %d", xid, xidSASL)
	}
	code = int32(binary.BigEndian.Uint32(body[12:]))
	if code != 0 || len(body) < 20 {
		return nil, code, nil
	}
	tl := int32(binary.BigEndian.Uint32(body[16:]))
	if tl < 0 {
		return nil, 0, nil
	}
	if int(tl) > len(body)-20 {
		return nil, 0, fmt.Errorf("token of %d bytes in a %d-byte reply", tl, n)
	}
	return body[20 : 20+tl], 0, nil
}

// authRefused ends the session after every server refused its
// credentials, or a server answered that it requires a login
// (saslrequired.go), after Connect: no connection is made again, so the
// server expires the session; its candidates learn it now, as an expiry,
// and Ended is closed.
func (s *Conn) authRefused() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if isDone(s.established) { // before the first session Dial fails with it
		defer s.endOnce.Do(func() { close(s.ended) })
	}
	if s.closed || s.id == 0 { // before the first session Connect reports it
		return
	}
	if cause := s.wire.auth.cause(); !isLoginRequired(cause) { // that one was logged (endRequired)
		s.log.Error().Err(cause).Int64("session_id", s.id).Str("reason", "auth_failed").
			Msg("every zookeeper server refused the session's SASL credentials; the session is over")
	}
	s.connected = false
	s.expiredLocked()
}
