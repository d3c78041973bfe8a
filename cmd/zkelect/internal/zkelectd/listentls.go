package zkelectd

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// ListenTLSConfig returns the daemon's server TLS configuration (TLS 1.2 at
// least) serving the PEM pair in the files cert and key (--listen-tls-cert,
// --listen-tls-key), loaded again when either changes; nil without either.
// The pair is loaded once here, so a bad file fails at start: an error when
// only one is given or the pair cannot be loaded.
func ListenTLSConfig(cert, key string) (*tls.Config, error) {
	if cert == "" && key == "" {
		return nil, nil
	}
	if cert == "" || key == "" {
		return nil, errors.New("--listen-tls-cert and --listen-tls-key go together: pass both")
	}
	r := &certReloader{certFile: cert, keyFile: key}
	if _, err := r.load(); err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.certificate}, nil
}

// WarnPlain logs a warning when addr is not loopback and served without
// TLS: the endpoint is read-only, but shows the member's shards and tokens.
func WarnPlain(log zerolog.Logger, addr net.Addr, tlsOn bool) {
	tcp, ok := addr.(*net.TCPAddr)
	if tlsOn || !ok || tcp.IP.IsLoopback() {
		return
	}
	log.Warn().Stringer("listen", addr).
		Msg("serving plain HTTP beyond loopback: /metrics and /v1/leaderships (read-only) are readable by anyone who can reach it; pass --listen-tls-cert/--listen-tls-key for HTTPS")
}

// certReloader serves a certificate pair from files, loading them again
// when either file's modification time changes (a rotated certificate,
// say a Kubernetes secret's update), at most once a second.
type certReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	mtimes  [2]time.Time
	checked time.Time
}

// certificate is tls.Config.GetCertificate: the current pair, or the last
// good one when the files cannot be read or do not match.
func (r *certReloader) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < time.Second {
		return r.cert, nil
	}
	r.checked = time.Now()
	if changed := r.changedLocked(); !changed {
		return r.cert, nil
	}
	if c, err := r.loadLocked(); err == nil {
		return c, nil
	}
	return r.cert, nil
}

func (r *certReloader) load() (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changedLocked()
	return r.loadLocked()
}

// changedLocked notes the files' modification times, reporting a change.
func (r *certReloader) changedLocked() bool {
	var now [2]time.Time
	for i, p := range []string{r.certFile, r.keyFile} {
		if fi, err := os.Stat(p); err == nil {
			now[i] = fi.ModTime()
		}
	}
	changed := now != r.mtimes
	r.mtimes = now
	return changed
}

func (r *certReloader) loadLocked() (*tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("load --listen-tls-cert %s / --listen-tls-key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert = &c
	return r.cert, nil
}
