package zkconn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// dialCounter counts the TCP connections made to each address.
type dialCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// wrap counts the connections base makes (nil: net.DialTimeout).
func (d *dialCounter) wrap(base zk.Dialer) zk.Dialer {
	if base == nil {
		base = net.DialTimeout
	}
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		d.mu.Lock()
		d.n[addr]++
		d.mu.Unlock()
		return base(network, addr, timeout)
	}
}

func (d *dialCounter) counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int, len(d.n))
	for k, v := range d.n {
		out[k] = v
	}
	return out
}

// selfSigned returns a client certificate no server trusts.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "untrusted client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestRefusedClientCertificateIsATLSError: servers with
// ssl.clientAuth=need refuse a client without a certificate, and one with
// a certificate they do not trust, with a TLS alert; Dial fails with a
// *TLSError naming the alert after one connection to each server, well
// before its connect timeout. Before, the alert (a *net.OpError, "remote
// error: tls: ...") was retried as a network error for the whole connect
// timeout and reported as no session.
func TestRefusedClientCertificateIsATLSError(t *testing.T) {
	const maxDialsPerRefusingServer = 3
	zks := testenv.New(t, testenv.Options{Servers: 3, TLS: &testenv.TLSOptions{ClientAuth: testenv.ClientAuthNeed},
		MaxSessionTimeout: 20 * time.Second})
	files, _ := zks.TLSFiles()
	for name, cert := range map[string]*tls.Certificate{"no client certificate": nil, "an untrusted one": new(selfSigned(t))} {
		t.Run(name, func(t *testing.T) {
			cfg, err := files.ClientConfig(false)
			if err != nil {
				t.Fatal(err)
			}
			if cert != nil {
				cfg.Certificates = []tls.Certificate{*cert}
			}
			const connectTimeout = 40 * time.Second
			dials := &dialCounter{n: map[string]int{}}
			ctx, cancel := context.WithTimeout(t.Context(), 2*connectTimeout)
			defer cancel()
			start := time.Now()
			c, err := Dial(ctx, zks.SecureAddrs(), Config{Timeout: 4 * time.Second, ConnectTimeout: connectTimeout,
				TLS: cfg, Dialer: dials.wrap(nil), Log: zerolog.Nop()})
			took := time.Since(start)
			if err == nil {
				_ = c.Close()
				t.Fatal("Dial succeeded; want the servers to refuse the client certificate")
			}
			var te *TLSError
			if !errors.As(err, &te) || !errors.Is(err, ErrTLS) || te.Alert == "" || !te.Untrusted() {
				t.Fatalf("Dial = %v; want a *TLSError naming the servers' alert", err)
			}
			if took >= connectTimeout {
				t.Errorf("Dial failed after %v, its connect timeout; want the refusal at once", took)
			}
			counts := dials.counts()
			// One connection a server, or two where a loaded machine let a
			// handshake time out before the server's alert arrived (a
			// timeout is retried, a refusal is not); retrying refusals for
			// the connect timeout dials each server dozens of times.
			for _, a := range zks.SecureAddrs() {
				if counts[a] < 1 || counts[a] > maxDialsPerRefusingServer {
					t.Errorf("connections to %s: %d; want 1 to %d (a refusal is not retried): %v", a, counts[a], maxDialsPerRefusingServer, counts)
				}
			}
			t.Logf("refused with alert %q after %v, connections %v: %v", te.Alert, took.Round(time.Millisecond), counts, err)
		})
	}
}
