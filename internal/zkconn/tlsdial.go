package zkconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// TLSError is a TLS handshake with a server that failed: its certificate
// is not trusted or not for the name asked, the server refused the
// connection with a TLS alert (Alert: ours is missing or untrusted under
// ssl.clientAuth=need, a protocol version it refuses), or the connection
// broke during the handshake. errors.Is(err, ErrTLS) holds for it. Dial
// fails with it (and ErrNoSession) once every server of the list has failed
// one attempt for a reason a retry does not cure (Untrusted), instead of
// retrying until its connect timeout (tlsrefusal.go).
type TLSError struct {
	Server string // "host:port" as dialled (the name given, not its address)
	// Alert is the TLS alert the server refused the connection with, as
	// crypto/tls words it ("bad certificate", "certificate required",
	// "unknown certificate authority"; RFC 8446 section 6.2); "" when the
	// server sent none.
	Alert string
	Err   error // crypto/tls's or crypto/x509's error
}

func (e *TLSError) Error() string {
	if e.Alert != "" {
		return fmt.Sprintf("TLS handshake with ZooKeeper server %s: the server refused it with TLS alert %q "+
			"(a client certificate missing or not trusted by its ssl.clientAuth=need, or a TLS setting it refuses): %v",
			e.Server, e.Alert, e.Err)
	}
	return fmt.Sprintf("TLS handshake with ZooKeeper server %s: %v", e.Server, e.Err)
}

// Unwrap returns the TLS library's error.
func (e *TLSError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTLS.
func (e *TLSError) Is(target error) bool { return target == ErrTLS }

// Untrusted reports whether the failure is one of certificates, which a
// retry does not cure: the server's is not trusted, expired or for another
// name; or the server refused ours (any TLS alert it sent, Alert); or the
// server does not speak TLS.
func (e *TLSError) Untrusted() bool {
	if e.Alert != "" {
		return true
	}
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		record   tls.RecordHeaderError
	)
	return errors.As(e.Err, &verify) || errors.As(e.Err, &unknown) || errors.As(e.Err, &hostname) ||
		errors.As(e.Err, &invalid) || errors.As(e.Err, &alert) || errors.As(e.Err, &record)
}

// minTLSHandshake is the least time a TLS handshake is given, whatever
// the handshake bound: a loaded server's first handshakes (its JVM not yet
// warm) take far longer than a ZooKeeper connect response.
const minTLSHandshake = 3 * time.Second

// tlsHandshake runs the client side of TLS over raw, a connection to addr,
// within bound. Without a ServerName in cfg the host of addr is checked
// (as tls.Dial does). It closes raw and returns a *TLSError on failure.
func tlsHandshake(raw net.Conn, cfg *tls.Config, addr string, bound time.Duration) (net.Conn, error) {
	c := cfg.Clone()
	if c.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		c.ServerName = host
	}
	tc := tls.Client(raw, c)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, &TLSError{Server: addr, Alert: remoteAlert(err), Err: err}
	}
	return tc, nil
}

// remoteAlert returns the TLS alert the peer sent, as crypto/tls words it
// without its "tls: " prefix, or "". crypto/tls reports a received alert
// as a *net.OpError whose Op is "remote error" (its alert type is not
// exported; tls.AlertError is only QUIC's).
func remoteAlert(err error) string {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return ""
	}
	return strings.TrimPrefix(op.Err.Error(), "tls: ")
}

// tlsConn is a TLS connection to entry that reports the server's refusal
// of the connection after the handshake: with TLS 1.3 a server that
// refuses the client's certificate sends its alert after the client's
// handshake has completed, so the client reads it at its first read (the
// connect response). A read that returns bytes clears entry's refusal.
type tlsConn struct {
	net.Conn
	entry   string
	refused *tlsRefusals
}

// Read reads from the TLS connection, turning a received alert into a
// *TLSError.
func (c *tlsConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.refused.accepted(c.entry)
	}
	if alert := remoteAlert(err); alert != "" {
		te := &TLSError{Server: c.entry, Alert: alert, Err: err}
		c.refused.refuse(c.entry, te)
		return n, te
	}
	return n, err
}
