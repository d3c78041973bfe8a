package recipe_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestExpiryWithAMinorityReachableCampaignsAgain: three servers listed,
// each behind a proxy of its own; every link is cut (blackholed) until
// the ensemble has expired the session, then only one server is reachable
// again (a partial partition: the other two stay blackholed). That server
// says the session expired, its data holds the election, so the expiry
// is believed: a new session comes within a few seconds and the
// candidate leads again. Before, an expiry needed a majority of the three
// entries: the client presented the dead session forever and never
// campaigned again.
func TestExpiryWithAMinorityReachableCampaignsAgain(t *testing.T) {
	zks := testenv.New(t, testenv.Options{Servers: 3})
	var proxies []*testenv.Proxy
	var servers []string
	for _, addr := range zks.Addrs() {
		p, err := testenv.ListenProxy([]string{addr})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		proxies = append(proxies, p)
		servers = append(servers, p.Addrs()[0])
	}
	s := session(t, strings.Join(servers, ","))
	c := candidate(t, s, electionPath(t))
	first := lead(t, c)
	old := s.ID()

	for _, p := range proxies {
		p.Blackhole()
	}
	raw := rawConn(t, zks.ConnectString())
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for { // the ensemble expires the session: its election znode goes
		ok, _, err := raw.Exists(first.Znode())
		if err == nil && !ok {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the ensemble did not expire session %x within %v (znode %s)", old, wait, first.Znode())
		case <-time.After(50 * time.Millisecond):
		}
	}
	proxies[0].Heal() // one server of three reachable again
	healed := time.Now()
	for s.ID() == old || s.ID() == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("session %x still presented %v after one server of its ensemble became reachable", old, time.Since(healed))
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Logf("new session %x %v after the heal", s.ID(), time.Since(healed).Round(time.Millisecond))
	l := lead(t, c)
	if l.SessionID() != s.ID() || l.SessionID() == old {
		t.Fatalf("leads on session %x; the session is %x (old %x)", l.SessionID(), s.ID(), old)
	}
}

// TestSASLBehindOneAddressSurvivesOneServerRefusing: the session's only
// server is one address in front of three SASL servers (a Service's
// ClusterIP, round-robin); one of them is restarted with another password
// for the session's user (a rolling JAAS change). Through reconnects that
// reach it, the session lives on through the two others. Before, one
// refusal through the one entry was "every configured server refused":
// the session ended for good.
func TestSASLBehindOneAddressSurvivesOneServerRefusing(t *testing.T) {
	zks := testenv.New(t, testenv.Options{Servers: 3, SASLUsers: saslUsers})
	b, err := testenv.ListenBalancer(zks.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	s := session(t, b.Addr(), recipe.WithSASL("group", saslUsers["group"]), recipe.WithSessionTimeout(4*time.Second))
	c := candidate(t, s, electionPath(t))
	lead(t, c)
	id := s.ID()
	rotated := map[string]string{"group": "rotated", "other": saslUsers["other"]}
	if err := zks.RestartWithSASLUsers(t.Context(), 0, rotated); err != nil {
		t.Fatal(err)
	}
	for i := range 6 { // round-robin: every third connection reaches the refusing server
		b.Cut()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		_, _, err := s.Exists(ctx, "/")
		cancel()
		if err != nil {
			t.Fatalf("read after cut %d: %v (session ended: %v)", i+1, err, s.EndErr())
		}
		if s.ID() != id {
			t.Fatalf("cut %d: session %x replaced by %x", i+1, id, s.ID())
		}
	}
	select {
	case <-s.Ended():
		t.Fatalf("session ended: %v", s.EndErr())
	default:
	}
	lead(t, c)
}

// TestForeignAddressBehindOneNameIsRefused: one name resolves to three
// addresses (a private /etc/hosts), two of them servers of the session's
// ensemble (the two it resolved to at Dial), one, added later, a server
// of another ensemble ahead in zxids (a stale DNS answer, an address
// reused by another namespace's ZooKeeper), which says the session
// expired. Over at least 10 reconnects, until that
// address has been dialled at least twice: the session is never replaced,
// no znode is made on the other ensemble, and every leadership is on the
// session's own ensemble with tokens a shared guard accepts in order.
// Before, that one address's "expired" was a majority of the one entry:
// the live session ended and the candidate led on the other ensemble.
func TestForeignAddressBehindOneNameIsRefused(t *testing.T) {
	testenv.WithPrivateHosts(t, func(t *testing.T, h *testenv.Hosts) {
		other := testenv.New(t, testenv.Options{Servers: 1})
		foreign := rawConn(t, other.ConnectString())
		for i := range 100 { // the other ensemble is ahead in zxids: it says "expired"
			if _, err := foreign.Create(fmt.Sprintf("/filler-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		}
		// sessions long enough that the reconnects' pacing never costs one
		own := testenv.New(t, testenv.Options{Servers: 1, MaxSessionTimeout: 20 * time.Second}).Addrs()[0]
		first := proxyOn(t, "127.0.0.2:0", own)
		_, port, _ := net.SplitHostPort(first.Addrs()[0])
		proxies := []*testenv.Proxy{first, proxyOn(t, "127.0.0.3:"+port, own), proxyOn(t, "127.0.0.4:"+port, other.Addrs()[0])}
		const name = "zk-mixed.test"
		if err := h.Set(name, "127.0.0.2", "127.0.0.3"); err != nil { // the session's ensemble, at Dial
			t.Fatal(err)
		}
		var foreignDials atomic.Int32
		dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
			if strings.HasPrefix(addr, "127.0.0.4:") {
				foreignDials.Add(1)
			}
			return net.DialTimeout(network, addr, timeout)
		}
		path := electionPath(t)
		var logs syncBuffer
		s := session(t, name+":"+port, recipe.WithDialer(dial), recipe.WithSessionTimeout(8*time.Second),
			recipe.WithLogger(zerolog.New(&logs).Level(zerolog.DebugLevel)))
		c := candidate(t, s, path)
		guard := zxidfence.NewMemory()
		accept := func(l *recipe.Leadership) {
			t.Helper()
			if l.SessionID() != s.ID() {
				t.Fatalf("leadership on session %x, the session is %x", l.SessionID(), s.ID())
			}
			if err := guard.Do(context.Background(), path, zxidfence.At(l.Token()), func(context.Context) error { return nil }); err != nil {
				t.Fatalf("guard refused the leader's token %v: %v", l.Token(), err)
			}
		}
		accept(lead(t, c))
		id := s.ID()
		if err := h.Set(name, "127.0.0.2", "127.0.0.3", "127.0.0.4"); err != nil { // now also another ensemble's
			t.Fatal(err)
		}
		reps := 0
		for ; reps < 10 || (foreignDials.Load() < 2 && reps < 60); reps++ {
			for _, p := range proxies {
				p.Cut()
			}
			if err := readAgain(s); err != nil {
				t.Fatalf("read after cut %d: %v", reps+1, err)
			}
			if s.ID() != id {
				t.Fatalf("cut %d: session %x replaced by %x (the other ensemble's address dialled %d times); log:\n%s",
					reps+1, id, s.ID(), foreignDials.Load(), logs.String())
			}
		}
		t.Logf("%d cuts; the other ensemble's address dialled %d times", reps, foreignDials.Load())
		if foreignDials.Load() == 0 {
			t.Fatalf("the other ensemble's address was never dialled in %d cuts: nothing tested", reps)
		}
		accept(lead(t, c))
		if s.HeldBefore(id) || s.ID() != id {
			t.Fatalf("session %x ended (now %x)", id, s.ID())
		}
		for _, p := range []string{path, "/recipe-test"} {
			if ok, _, err := foreign.Exists(p); err != nil || ok {
				t.Fatalf("%s on the other ensemble: exists %v, %v", p, ok, err)
			}
		}
	})
}

// proxyOn starts a proxy listening on listen ("ip:port") to target.
func proxyOn(t *testing.T, listen, target string) *testenv.Proxy {
	t.Helper()
	p, err := testenv.ListenProxyAt([]string{listen}, []string{target})
	if err != nil {
		t.Fatalf("proxy on %s: %v", listen, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// readAgain reads through s until a read succeeds (a reconnect may take
// longer than one read waits for a connection), within wait.
func readAgain(s *recipe.Session) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		_, _, err := s.Exists(ctx, "/")
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}
