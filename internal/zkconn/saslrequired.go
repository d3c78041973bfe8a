package zkconn

import (
	"errors"

	"github.com/zkelect/zkelect/internal/jute"
)

// An ensemble that requires a SASL login (ZooKeeper 3.6's
// sessionRequireClientSASLAuth, 3.7's enforce.auth.enabled) answers the
// first request of a connection that has not logged in, any request but
// auth and sasl (pings, go-zookeeper's own and the layer's, such as the
// read of /zookeeper/config at each session, reconfig.go), with
// SESSIONCLOSEDREQUIRESASLAUTH (-124) and closes the connection
// (ZooKeeperServer.processPacket, AuthenticationHelper.enforceAuthentication).
// Whichever request takes that answer, it is the session's end: every
// server of the ensemble answers alike, and a login the session did not
// make, or that did not satisfy the server, is not made on the next
// connection either. So the answer is recorded as the session's end cause
// as a refusal of its credentials by every server is (sasl.go): an
// *AuthError wrapping a *CodeError of code -124, which every call pending
// on the connection, every later call, Dial (before the first session) and
// EndErr return; Ended is closed, the session's candidates learn it as an
// expiry, and no connection is made again.

// loginRequired records the session's end for a reply of code -124 to
// the request xid (c.mu held): before the reply is delivered, so its
// caller, and every call woken by the connection's close, finds the cause.
// Read then tells the Conn (Conn.authRefused) and closes the connection.
func (c *wireConn) loginRequired(xid int32) {
	op := "request"
	switch r, ok := c.pending[xid]; {
	case xid == jute.XidPing:
		op = "ping"
	case ok:
		op = jute.OpName(r.op)
	}
	err := &AuthError{Server: c.addr, Err: &CodeError{Op: op, Code: jute.CodeSessionClosedRequireSASL}}
	if cred := c.w.sasl; cred != nil {
		err.Mechanism, err.User = "DIGEST-MD5", cred.User
	}
	c.w.auth.set(err)
	c.required = err
}

// endRequired ends the session after loginRequired (c.mu not held) and
// returns the error for go-zookeeper's read: it drops the connection, as
// the server does. It logs a warning only: every caller of the session
// gets the error, which says it all.
func (c *wireConn) endRequired(err error) error {
	c.w.log.Warn().Str("server", c.addr).Int64("session_id", c.w.sessionID.Load()).Str("reason", "sasl_required").Err(err).
		Msg("zookeeper requires a SASL login of the session (SESSIONCLOSEDREQUIRESASLAUTH); the session is over")
	if f := c.w.onRefused; f != nil {
		f()
	}
	_ = c.Close()
	return err
}

// isLoginRequired reports whether err is the end cause loginRequired
// records.
func isLoginRequired(err error) bool {
	var ce *CodeError
	return errors.As(err, &ce) && ce.Code == jute.CodeSessionClosedRequireSASL
}
