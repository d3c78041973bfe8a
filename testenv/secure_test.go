package testenv_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/testenv"
)

// tlsDialer dials a server's secure client port with cfg.
func tlsDialer(cfg *tls.Config) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, cfg)
	}
}

func TestTLSClusterServesOnItsSecurePort(t *testing.T) {
	for _, tc := range []struct {
		name    string
		servers int
		cert    bool
	}{{"standalone without a client certificate", 1, false}, {"ensemble with a client certificate", 3, true}} {
		t.Run(tc.name, func(t *testing.T) {
			// SASL users too: their JAAS section must not stop the servers.
			c := testenv.New(t, testenv.Options{Servers: tc.servers, TLS: &testenv.TLSOptions{},
				SASLUsers: map[string]string{"group": "s3cret"}})
			files, ok := c.TLSFiles()
			if !ok || len(c.SecureAddrs()) != tc.servers {
				t.Fatalf("TLSFiles() ok = %v, SecureAddrs() = %v; want TLS files and %d secure addresses", ok, c.SecureAddrs(), tc.servers)
			}
			cfg, err := files.ClientConfig(tc.cert)
			if err != nil {
				t.Fatal(err)
			}
			cl := connectVia(t, strings.Join(c.SecureAddrs(), ","), 4*time.Second, tlsDialer(cfg))
			if _, err := cl.Create("/over-tls", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("create over TLS: %v", err)
			}
			plain := connect(t, c.ConnectString(), 4*time.Second)
			if data, _, err := plain.Get("/over-tls"); err != nil || string(data) != "x" {
				t.Fatalf("read back on the plain port: %q, %v; want x", data, err)
			}
		})
	}
}

func TestTLSClusterRefusesUntrustedClient(t *testing.T) {
	c := testenv.New(t, testenv.Options{TLS: &testenv.TLSOptions{ClientAuth: testenv.ClientAuthNeed}})
	files, _ := c.TLSFiles()
	cfg, err := files.ClientConfig(false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", c.SecureAddrs()[0])
	if err == nil {
		defer conn.Close()
		// TLS 1.3 reports the server's refusal of a missing certificate on
		// the first read.
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = conn.Read(make([]byte, 1))
	}
	t.Logf("refused: %v", err)
	var alert tls.AlertError
	if !errors.As(err, &alert) && !strings.Contains(fmtErr(err), "certificate") {
		t.Fatalf("a client without a certificate on a ClientAuthNeed port got %v; want a TLS alert about the certificate", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSecurityOptionsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		opts  testenv.Options
		field string
	}{
		{testenv.Options{TLS: &testenv.TLSOptions{ClientAuth: "maybe"}}, "TLS.ClientAuth"},
		{testenv.Options{SASLUsers: map[string]string{"bad user": "pw"}}, "SASLUsers"},
		{testenv.Options{SASLUsers: map[string]string{"bob": `pw"`}}, "SASLUsers"},
		{testenv.Options{SASLUsers: map[string]string{"bob": ""}}, "SASLUsers"},
	} {
		var oe *testenv.OptionsError
		if err := tc.opts.Validate(); !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("Validate(%+v) = %v; want an *OptionsError for %s", tc.opts, err, tc.field)
		}
	}
}
