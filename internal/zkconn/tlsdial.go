package zkconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"
)

// TLSError is a TLS handshake with a server that failed: its certificate
// is not trusted or not for the name asked (Untrusted), the server refused
// ours, or the connection broke during the handshake. errors.Is(err,
// ErrTLS) holds for it. Connect fails with it (and ErrUnreachable) once
// every server has failed the handshake for a reason of its certificates,
// instead of retrying until its timeout.
type TLSError struct {
	Server string // "host:port"
	Err    error  // crypto/tls's or crypto/x509's error
}

func (e *TLSError) Error() string {
	return fmt.Sprintf("TLS handshake with ZooKeeper server %s: %v", e.Server, e.Err)
}

// Unwrap returns the TLS library's error.
func (e *TLSError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTLS.
func (e *TLSError) Is(target error) bool { return target == ErrTLS }

// Untrusted reports whether the failure is one of certificates, which a
// retry does not cure: the server's is not trusted, expired or for another
// name; or the server refused ours (a TLS alert); or the server does not
// speak TLS.
func (e *TLSError) Untrusted() bool {
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
		return nil, &TLSError{Server: addr, Err: err}
	}
	return tc, nil
}
