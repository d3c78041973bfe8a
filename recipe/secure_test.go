package recipe_test

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
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// saslUsers are the accounts of the secured test servers.
var saslUsers = map[string]string{"group": "group-secret", "other": "other-secret"}

// secureCluster starts servers with a secure client port (client
// certificates optional) and SASL DIGEST-MD5 for saslUsers, granting
// session timeouts up to 20s.
func secureCluster(t *testing.T, servers int) (*testenv.Cluster, testenv.TLSFiles) {
	t.Helper()
	c := testenv.New(t, testenv.Options{Servers: servers, TLS: &testenv.TLSOptions{}, SASLUsers: saslUsers,
		MaxSessionTimeout: 20 * time.Second})
	files, _ := c.TLSFiles()
	return c, files
}

// tlsSession is session with a minute to connect: a loaded machine's
// servers are slow at their first TLS handshakes.
func tlsSession(t testing.TB, servers string, opts ...recipe.SessionOption) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts = append([]recipe.SessionOption{recipe.WithSessionTimeout(2 * time.Second), recipe.WithConnectTimeout(time.Minute)}, opts...)
	s, err := recipe.Connect(ctx, strings.Split(servers, ","), opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", servers, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func clientTLS(t *testing.T, files testenv.TLSFiles, cert bool) *tls.Config {
	t.Helper()
	cfg, err := files.ClientConfig(cert)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// connectErr connects with a long connect timeout and returns the error,
// which must come before that timeout.
func connectErr(t *testing.T, servers []string, opts ...recipe.SessionOption) error {
	t.Helper()
	const connectTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 2*connectTimeout)
	defer cancel()
	opts = append([]recipe.SessionOption{recipe.WithConnectTimeout(connectTimeout)}, opts...)
	start := time.Now()
	s, err := recipe.Connect(ctx, servers, opts...)
	if err == nil {
		_ = s.Close()
		t.Fatal("Connect succeeded; want it refused")
	}
	if time.Since(start) >= connectTimeout {
		t.Fatalf("Connect failed only at its connect timeout (%v); want a refusal before: %v", connectTimeout, err)
	}
	return err
}

// untrustedCA returns a pool with a freshly made CA that signed nothing of
// the servers'.
func untrustedCA(t *testing.T) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not the servers' CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// countingDialer counts the connections Connect makes.
func countingDialer(n *atomic.Int32) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		n.Add(1)
		return net.DialTimeout(network, addr, timeout)
	}
}

func TestTLSAndSASL(t *testing.T) {
	zks, files := secureCluster(t, 1)
	tlsAddrs := zks.SecureAddrs()
	groupSASL := recipe.WithSASL("group", saslUsers["group"])

	t.Run("ElectionOverTLSWithAndWithoutClientCertificate", func(t *testing.T) {
		for _, cert := range []bool{false, true} {
			s := tlsSession(t, strings.Join(tlsAddrs, ","), recipe.WithTLS(clientTLS(t, files, cert)))
			l := lead(t, candidate(t, s, electionPath(t)))
			if l.Token() == 0 {
				t.Fatalf("leadership over TLS (client certificate %v) without a token", cert)
			}
		}
	})

	t.Run("UntrustedServerIsRefusedAtOnce", func(t *testing.T) {
		cfg := clientTLS(t, files, false)
		cfg.RootCAs = untrustedCA(t)
		err := connectErr(t, tlsAddrs, recipe.WithTLS(cfg))
		var te *recipe.TLSError
		if !errors.Is(err, recipe.ErrTLS) || !errors.As(err, &te) || !te.Untrusted() {
			t.Fatalf("Connect to a server signed by an untrusted CA = %v; want an untrusted *recipe.TLSError", err)
		}
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			t.Errorf("the error does not carry x509.UnknownAuthorityError: %v", err)
		}
	})

	t.Run("ServerNameIsChecked", func(t *testing.T) {
		cfg := clientTLS(t, files, false)
		cfg.ServerName = "zookeeper.example.com"
		err := connectErr(t, tlsAddrs, recipe.WithTLS(cfg))
		var hostname x509.HostnameError
		if !errors.Is(err, recipe.ErrTLS) || !errors.As(err, &hostname) {
			t.Fatalf("Connect asking for another server name = %v; want ErrTLS with x509.HostnameError", err)
		}
	})

	t.Run("RotatingClientCertificatePassesTheACLCheck", func(t *testing.T) {
		// A client certificate given by GetClientCertificate (one that
		// rotates) is an x509 identity GroupACL grants like one in
		// Certificates: the election the candidate made passes its check
		// at the next campaign.
		cfg := clientTLS(t, files, true)
		pair := cfg.Certificates[0]
		cfg.Certificates = nil
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
		path := securedElection(t)
		s := tlsSession(t, strings.Join(tlsAddrs, ","), recipe.WithTLS(cfg), groupSASL)
		c := candidate(t, s, path, recipe.WithACL(recipe.GroupACL()))
		if err := lead(t, c).Resign(context.Background()); err != nil {
			t.Fatal(err)
		}
		lead(t, c)
	})

	t.Run("SASLIdentityOwnsItsZnodes", func(t *testing.T) {
		path := securedElection(t)
		s := tlsSession(t, strings.Join(tlsAddrs, ","), recipe.WithTLS(clientTLS(t, files, false)), groupSASL)
		l := lead(t, candidate(t, s, path, recipe.WithACL(recipe.GroupACL())))
		acl, _, err := s.Conn().GetACL(l.Znode())
		if err != nil {
			t.Fatal(err)
		}
		want := zk.ACL{Perms: zk.PermAll, Scheme: "sasl", ID: "group"}
		if len(acl) != 2 || acl[0] != want {
			t.Fatalf("ACL of the leader's znode = %v; want %v first (GroupACL on a SASL session)", acl, want)
		}
		for name, opts := range map[string][]recipe.SessionOption{
			"an unauthenticated client":    nil,
			"another SASL user":            {recipe.WithSASL("other", saslUsers["other"])},
			"a digest user named the same": {recipe.WithDigestAuth("group", saslUsers["group"])},
		} {
			o := session(t, zks.ConnectString(), opts...)
			if err := o.Conn().Delete(l.Znode(), -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("%s deleting the leader's znode: %v; want zk.ErrNoAuth", name, err)
			}
			if _, err := o.Conn().Create(path+"/forged", nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
				t.Errorf("%s creating a znode in the election: %v; want zk.ErrNoAuth", name, err)
			}
		}
		select {
		case <-l.Done():
			t.Fatalf("leadership ended: %v", l.Err())
		default:
		}
	})

	t.Run("WrongCredentialsFailAtOnceWithoutReconnecting", func(t *testing.T) {
		for name, cred := range map[string][2]string{"wrong password": {"group", "guess"}, "unknown user": {"nobody", "guess"}} {
			var dials atomic.Int32
			err := connectErr(t, zks.Addrs(), recipe.WithSASL(cred[0], cred[1]), recipe.WithDialer(countingDialer(&dials)))
			var ae *recipe.AuthError
			if !errors.Is(err, recipe.ErrAuthFailed) || !errors.As(err, &ae) || !errors.Is(err, zk.ErrAuthFailed) {
				t.Fatalf("%s: Connect = %v; want a *recipe.AuthError wrapping zk.ErrAuthFailed", name, err)
			}
			if ae.User != cred[0] || ae.Mechanism != "DIGEST-MD5" {
				t.Errorf("%s: AuthError names user %q, mechanism %q", name, ae.User, ae.Mechanism)
			}
			if n := dials.Load(); n != 1 {
				t.Errorf("%s: %d connections made; want 1 (a refusal is not retried)", name, n)
			}
		}
	})

	t.Run("ServerWithoutSASLIsAnAuthError", func(t *testing.T) {
		err := connectErr(t, zkc.Addrs(), groupSASL)
		if !errors.Is(err, recipe.ErrAuthFailed) || !strings.Contains(err.Error(), "no SASL") {
			t.Fatalf("SASL to a server without it: %v; want ErrAuthFailed saying the server offers no SASL", err)
		}
	})

	t.Run("ZooKeeperGuardFencesOverTLS", func(t *testing.T) { checkGuardOverTLSWithSASL(t, zks, files) })

	t.Run("SASLRunsAgainAfterReconnect", func(t *testing.T) {
		proxy := zks.NewProxyT(t)
		path := securedElection(t)
		s := session(t, proxy.ConnectString(), recipe.WithDialer(proxy.Dialer()), groupSASL,
			recipe.WithSessionTimeout(4*time.Second))
		l := lead(t, candidate(t, s, path, recipe.WithACL(recipe.GroupACL())))
		id := s.ID()
		proxy.Cut()
		if err := awaitEnd(t, l, "the leadership to end at the cut"); !errors.Is(err, recipe.ErrSuspended) {
			t.Fatalf("leadership ended with %v; want ErrSuspended", err)
		}
		eventually(t, "the session to reconnect", func() bool { return s.Connected() })
		if s.ID() != id {
			t.Fatalf("session %x became %x; want the same session reconnected", id, s.ID())
		}
		// Only the group's identity may create in the election: this
		// connection has logged in again.
		if _, err := s.Conn().Create(path+"/after-reconnect", nil, 0, recipe.GroupACL()); err != nil {
			t.Fatalf("create under the group's election after a reconnect: %v", err)
		}
	})
}

// TestTLSEnsembleSessionMovesWithItsLogin: a session over TLS with SASL
// on a 3-node ensemble whose server is killed moves to another server, with
// a new TLS handshake and SASL login there: it keeps its id and the group's
// rights, and its candidate leads again with the same token.
func TestTLSEnsembleSessionMovesWithItsLogin(t *testing.T) {
	zks, files := secureCluster(t, 3)
	path := securedElection(t)
	s := tlsSession(t, strings.Join(zks.SecureAddrs(), ","), recipe.WithTLS(clientTLS(t, files, true)),
		recipe.WithSASL("group", saslUsers["group"]), recipe.WithSessionTimeout(10*time.Second), recipe.WithExactSessionTimeout())
	c := candidate(t, s, path, recipe.WithACL(recipe.GroupACL()))
	first := lead(t, c)
	id, was := s.ID(), s.Conn().Server()
	killed := slices.Index(zks.SecureAddrs(), was)
	if killed < 0 {
		t.Fatalf("session connected to %s, not one of %v", was, zks.SecureAddrs())
	}
	if err := zks.Kill(killed); err != nil {
		t.Fatal(err)
	}
	if err := awaitEnd(t, first, "the leadership to end at the connection loss"); !errors.Is(err, recipe.ErrSuspended) {
		t.Fatalf("leadership ended with %v; want ErrSuspended", err)
	}
	eventually(t, "the session to reconnect to another server", func() bool { return s.Connected() && s.Conn().Server() != was })
	if s.ID() != id {
		t.Fatalf("session %x became %x; want the same session", id, s.ID())
	}
	if _, err := s.Conn().Create(path+"/moved", nil, 0, recipe.GroupACL()); err != nil {
		t.Fatalf("create under the group's election after moving to %s: %v", s.Conn().Server(), err)
	}
	again := lead(t, c)
	if again.Token() != first.Token() {
		t.Errorf("token %v after the move, %v before; want the same znode leading", again.Token(), first.Token())
	}
}

// TestSASLRefusedAfterConnectEndsSession: when a server, restarted with a
// new password for the session's user, refuses the login on reconnect, the
// session is over at once (its candidates' leadership ends, it reports no
// session) and it makes no further connection.
func TestSASLRefusedAfterConnectEndsSession(t *testing.T) {
	zks := testenv.New(t, testenv.Options{SASLUsers: saslUsers, MaxSessionTimeout: 20 * time.Second})
	var dials atomic.Int32
	s := session(t, zks.ConnectString(), recipe.WithSASL("group", saslUsers["group"]),
		recipe.WithSessionTimeout(15*time.Second), recipe.WithDialer(countingDialer(&dials)))
	l := lead(t, candidate(t, s, electionPath(t)))
	if err := zks.RestartWithSASLUsers(t.Context(), 0, map[string]string{"group": "rotated"}); err != nil {
		t.Fatal(err)
	}
	awaitEnd(t, l, "the leadership to end")
	eventually(t, "the session to be over", func() bool { return s.ID() == 0 })
	n := dials.Load()
	select {
	case <-time.After(3 * time.Second): // go-zookeeper retries a round of servers every second
	case <-t.Context().Done():
	}
	if got := dials.Load(); got != n {
		t.Errorf("%d connections made after the refusal; want none", got-n)
	}
}

// checkGuardOverTLSWithSASL: the ZooKeeper guard on a session over TLS
// with SASL writes the leader's data with the group's ACL; the deposed
// leader's write fails inside ZooKeeper, and a client without the group's
// identity cannot overwrite the target.
func checkGuardOverTLSWithSASL(t *testing.T, zks *testenv.Cluster, files testenv.TLSFiles) {
	ctx := t.Context()
	path := securedElection(t)
	var cands []*recipe.Candidate
	var guards []*zxidfence.ZooKeeper
	for range 2 {
		s := tlsSession(t, strings.Join(zks.SecureAddrs(), ","), recipe.WithTLS(clientTLS(t, files, false)),
			recipe.WithSASL("group", saslUsers["group"]))
		cands = append(cands, candidate(t, s, path, recipe.WithACL(recipe.GroupACL())))
		g, err := zxidfence.NewZooKeeper(s.Conn(), zxidfence.WithACL(recipe.GroupACL()))
		if err != nil {
			t.Fatal(err)
		}
		guards = append(guards, g)
	}
	target := path + "-resource"
	a := lead(t, cands[0])
	if err := guards[0].Write(ctx, target, zxidfence.LeaderOf(a, 0), []byte("by a")); err != nil {
		t.Fatalf("the leader's fenced write over TLS: %v", err)
	}
	second := campaignAsync(context.Background(), cands[1])
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	b := awaitResult(t, second, "the second candidate to lead").lead
	if err := guards[0].Write(ctx, target, zxidfence.LeaderOf(a, 0), []byte("by a, deposed")); !errors.Is(err, zxidfence.ErrNotLeader) {
		t.Fatalf("the deposed leader's write = %v; want ErrNotLeader", err)
	}
	if err := guards[1].Write(ctx, target, zxidfence.LeaderOf(b, 0), []byte("by b")); err != nil {
		t.Fatalf("the new leader's write: %v", err)
	}
	if _, err := session(t, zks.ConnectString()).Conn().Set(target, []byte("forged"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("an unauthenticated client overwriting the target: %v; want zk.ErrNoAuth", err)
	}
}
