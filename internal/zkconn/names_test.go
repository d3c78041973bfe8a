package zkconn

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// logBuffer collects a Conn's log lines; safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dialT dials servers with cfg (a minute to connect) and closes the Conn
// at the test's end.
func dialT(t *testing.T, servers []string, cfg Config) *Conn {
	t.Helper()
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := Dial(ctx, servers, cfg)
	if err != nil {
		t.Fatalf("dial %v: %v", servers, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// proxyAt starts a proxy to the shared server listening on addr.
func proxyAt(t *testing.T, addr string) *testenv.Proxy {
	t.Helper()
	p, err := testenv.ListenProxyAt([]string{addr}, zkc.Addrs())
	if err != nil {
		t.Fatalf("proxy on %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// awaitSessionVia waits until session id has been granted (or resumed)
// through p, and is usable on c again.
func awaitSessionVia(ctx context.Context, c *Conn, p *testenv.Proxy, id int64) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		got, ok := c.Usable()
		if ok && got == id && slices.ContainsFunc(p.Sessions(), func(s testenv.SessionCredentials) bool { return s.ID == id }) {
			return nil
		}
		if ok && got != id {
			return errors.New("the session changed: the old one was lost")
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ephemeral creates an ephemeral znode for the test and returns its path
// and stat.
func ephemeral(t *testing.T, c *Conn, name string) (string, *zk.Stat) {
	t.Helper()
	path, stat, err := c.Create2(t.Context(), "/"+name+"-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("create ephemeral: %v", err)
	}
	return path, stat
}

// checkOwned checks that path still exists with czxid and is owned by id.
func checkOwned(t *testing.T, c *Conn, path string, czxid, id int64) {
	t.Helper()
	ok, stat, err := c.Exists(t.Context(), path)
	if err != nil || !ok || stat.Czxid != czxid || stat.EphemeralOwner != id {
		t.Fatalf("after the move %s: exists %v, stat %+v, err %v; want czxid %#x owned by session %#x", path, ok, stat, err, czxid, id)
	}
}

// TestNameFollowsAServerThatMoved: the server's name moves from 127.0.0.2
// to 127.0.0.3 (same port) and nothing listens at the old address any
// more; the session reconnects through the new address and keeps its
// ephemeral znode (same czxid, the fencing token, same owner). With
// go-zookeeper's own host provider (names resolved once, at Dial) it kept
// dialling 127.0.0.2 until the session expired.
func TestNameFollowsAServerThatMoved(t *testing.T) {
	testenv.WithPrivateHosts(t, func(t *testing.T, h *testenv.Hosts) {
		old := proxyAt(t, "127.0.0.2:0")
		port := portOf(t, old.Addrs()[0])
		if err := h.Set("zk-moving.test", "127.0.0.2"); err != nil {
			t.Fatal(err)
		}
		var log logBuffer
		c := dialT(t, []string{"zk-moving.test:" + port}, Config{Timeout: 12 * time.Second, Log: zerolog.New(&log)})
		path, stat := ephemeral(t, c, "moving")
		id := c.ID()

		moved := proxyAt(t, "127.0.0.3:"+port)
		if err := h.Set("zk-moving.test", "127.0.0.3"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_ = old.Close() // its connections cut, nothing listens at 127.0.0.2 any more
		ctx, cancel := context.WithTimeout(t.Context(), 11*time.Second)
		defer cancel()
		if err := awaitSessionVia(ctx, c, moved, id); err != nil {
			t.Fatalf("session %#x through the name's new address 127.0.0.3: %v\nlog:\n%s", id, err, log.String())
		}
		t.Logf("session %#x back through 127.0.0.3 %v after the move", id, time.Since(start).Round(time.Millisecond))
		checkOwned(t, c, path, stat.Czxid, id)
		if l := log.String(); !strings.Contains(l, "zookeeper server address changed") || !strings.Contains(l, `"to":"127.0.0.3"`) {
			t.Errorf("no info line for the address change to 127.0.0.3; log:\n%s", l)
		}
	})
}

// TestNameThatDoesNotResolveYetIsSkipped: of three names one does not
// resolve at Dial; Dial succeeds through the others, the name is skipped
// with a warning naming it, and once it resolves (the two others' servers
// gone) the session carries on through it. go-zookeeper's own provider
// failed Dial at once ("no such host").
func TestNameThatDoesNotResolveYetIsSkipped(t *testing.T) {
	testenv.WithPrivateHosts(t, func(t *testing.T, h *testenv.Hosts) {
		ips := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
		var proxies []*testenv.Proxy
		var servers []string
		for i, ip := range ips {
			p := proxyAt(t, ip+":0")
			name := "zk-" + string(rune('a'+i)) + ".test"
			proxies = append(proxies, p)
			servers = append(servers, name+":"+portOf(t, p.Addrs()[0]))
			if i < 2 {
				if err := h.Set(name, ip); err != nil {
					t.Fatal(err)
				}
			}
		}
		var log logBuffer
		c := dialT(t, servers, Config{Timeout: 15 * time.Second, ConnectTimeout: 10 * time.Second, Log: zerolog.New(&log)})
		path, stat := ephemeral(t, c, "unresolved")
		id := c.ID()

		_ = proxies[0].Close()
		_ = proxies[1].Close()
		ctx, cancel := context.WithTimeout(t.Context(), 14*time.Second)
		defer cancel()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for !strings.Contains(log.String(), servers[2]) { // a round reached the name that does not resolve
			select {
			case <-tick.C:
			case <-ctx.Done():
				t.Fatalf("no warning naming %s; log:\n%s", servers[2], log.String())
			}
		}
		if err := h.Set("zk-c.test", ips[2]); err != nil {
			t.Fatal(err)
		}
		if err := awaitSessionVia(ctx, c, proxies[2], id); err != nil {
			t.Fatalf("session %#x through %s once it resolves: %v\nlog:\n%s", id, servers[2], err, log.String())
		}
		checkOwned(t, c, path, stat.Czxid, id)
		if l := log.String(); !strings.Contains(l, "does not resolve") {
			t.Errorf("the warning does not say the name does not resolve; log:\n%s", l)
		}
	})
}

// TestTLSVerifiesTheNameDialled: the servers' certificate is issued for a
// name only (no IP address); a client given that name verifies it and
// connects, without a ServerName of its own. go-zookeeper's provider
// dialled the resolved address, and the check failed with "doesn't contain
// any IP SANs". An explicit ServerName still wins.
func TestTLSVerifiesTheNameDialled(t *testing.T) {
	testenv.WithPrivateHosts(t, func(t *testing.T, h *testenv.Hosts) {
		const name = "zk-tls.test"
		zks := testenv.New(t, testenv.Options{TLS: &testenv.TLSOptions{Names: []string{name}}, MaxSessionTimeout: 20 * time.Second})
		if err := h.Set(name, "127.0.0.1"); err != nil {
			t.Fatal(err)
		}
		files, _ := zks.TLSFiles()
		cfg, err := files.ClientConfig(false)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ServerName = ""
		port := portOf(t, zks.SecureAddrs()[0])
		c := dialT(t, []string{name + ":" + port}, Config{Timeout: 4 * time.Second, TLS: cfg, Log: zerolog.Nop()})
		if _, err := c.Create(t.Context(), "/over-tls-by-name", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create over TLS by name: %v", err)
		}

		for what, tc := range map[string]struct {
			server, serverName string
		}{
			"the address":         {"127.0.0.1:" + port, ""},
			"another ServerName:": {name + ":" + port, "other.test"},
		} {
			cfg := cfg.Clone()
			cfg.ServerName = tc.serverName
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			_, err := Dial(ctx, []string{tc.server}, Config{Timeout: 4 * time.Second, ConnectTimeout: 30 * time.Second, TLS: cfg, Log: zerolog.Nop()})
			cancel()
			var hostname x509.HostnameError
			if !errors.Is(err, ErrTLS) || !errors.As(err, &hostname) {
				t.Errorf("dial by %s: %v; want ErrTLS with x509.HostnameError (the certificate is for %s only)", what, err, name)
			}
		}
	})
}

// TestUnresolvableNameIsNamedInTheDialError: a list whose only name does
// not resolve (.invalid never does, RFC 6761) fails at the connect timeout
// with a *ResolveError naming it, not a bare "no session".
func TestUnresolvableNameIsNamedInTheDialError(t *testing.T) {
	const server = "zk-nowhere.invalid:2181"
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, []string{server}, Config{Timeout: 4 * time.Second, ConnectTimeout: 2 * time.Second, Log: zerolog.Nop()})
	if err == nil {
		_ = c.Close()
		t.Fatal("Dial succeeded")
	}
	var re *ResolveError
	if !errors.Is(err, ErrNoSession) || !errors.As(err, &re) || re.Server != server {
		t.Fatalf("Dial = %v; want ErrNoSession with a *ResolveError naming %s", err, server)
	}
}
