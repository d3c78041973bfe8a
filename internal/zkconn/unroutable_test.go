package zkconn

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// unroutable is a client that reaches a DynamicConfig ensemble only
// through lb (one proxy address in front of server 0, as a load balancer
// or a NodePort is), while every member address of /zookeeper/config is
// routed into a blackholed proxy: connections are accepted and then
// nothing comes back, as on a route whose packets are dropped.
type unroutable struct {
	zks   *testenv.Cluster
	lb    *testenv.Proxy
	dials *dialCounter
	c     *Conn
	log   *logBuffer
}

func newUnroutable(t *testing.T, cfg Config) *unroutable {
	t.Helper()
	zks := testenv.New(t, testenv.Options{Servers: 3, DynamicConfig: true, MaxSessionTimeout: 20 * time.Second})
	lb, err := testenv.ListenProxy(zks.Addrs()[:1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Close() })
	black, err := testenv.ListenProxy(zks.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = black.Close() })
	black.Blackhole()
	u := &unroutable{zks: zks, lb: lb, dials: &dialCounter{n: map[string]int{}}, log: &logBuffer{}}
	cfg.Timeout, cfg.Log, cfg.Dialer = 4*time.Second, zerolog.New(u.log), u.dials.wrap(black.Dialer())
	u.c = dialT(t, lb.Addrs(), cfg)
	return u
}

// memberDials returns the connections made to addresses other than lb's.
func (u *unroutable) memberDials() map[string]int {
	out := u.dials.counts()
	delete(out, u.lb.Addrs()[0])
	return out
}

// blips cuts lb's connections n times, each after the session is back,
// and fails the test when a reconnect does not keep the session.
func (u *unroutable) blips(t *testing.T, n int) {
	t.Helper()
	id := u.c.ID()
	for i := range n {
		next := u.c.NextConnect()
		start := time.Now()
		u.lb.Cut()
		select {
		case <-next:
		case <-time.After(time.Minute):
			t.Fatalf("blip %d: no reconnect within a minute of cutting lb (the session connected elsewhere?); dials %v; log:\n%s",
				i+1, u.dials.counts(), u.log.String())
		}
		if got := u.c.ID(); got != id {
			t.Fatalf("blip %d: the session %#x was lost (now %#x) after %v; member dials %v; log:\n%s",
				i+1, id, got, time.Since(start).Round(time.Millisecond), u.memberDials(), u.log.String())
		}
		t.Logf("blip %d: session back in %v", i+1, time.Since(start).Round(time.Millisecond))
	}
}

// TestUnroutableMembersDoNotCostTheSession: /zookeeper/config names the
// servers at addresses the client cannot route to; 8 blips of its one
// address with 4s sessions keep the session, each member is dialled at
// most maxTrialTimeouts times, then dropped. Before, the members replaced
// the client's address in the rounds and each cost a handshake bound: the
// first blip lost the session.
func TestUnroutableMembersDoNotCostTheSession(t *testing.T) {
	u := newUnroutable(t, Config{})
	path, stat := ephemeral(t, u.c, "unroutable")
	waitFor(t, 30*time.Second, "the members read from /zookeeper/config", func() bool { return len(members(u.c)) == 3 })
	u.blips(t, 8)
	dials := u.memberDials()
	if len(dials) == 0 {
		t.Error("no member dialled: the configuration was not followed")
	}
	for m, n := range dials {
		if n > maxTrialTimeouts {
			t.Errorf("member %s dialled %d times; want at most %d (then dropped): %v", m, n, maxTrialTimeouts, dials)
		}
	}
	checkOwned(t, u.c, path, stat.Czxid, u.c.ID())
}

// TestEnsembleTrackingOffDialsOnlyTheServersGiven: with NoEnsembleTracking
// the members of /zookeeper/config are never dialled.
func TestEnsembleTrackingOffDialsOnlyTheServersGiven(t *testing.T) {
	u := newUnroutable(t, Config{NoEnsembleTracking: true})
	u.blips(t, 3)
	if d := u.memberDials(); len(d) != 0 {
		t.Fatalf("members dialled with ensemble tracking off: %v", d)
	}
	if m := members(u.c); m != nil {
		t.Fatalf("members read with ensemble tracking off: %v", m)
	}
}

// TestWildcardMemberIsNeverDialled: a member listed at 0.0.0.0 (its
// quorum and client addresses both the wildcard) is not dialled: a
// wildcard is this machine's address, not the member's. Before, it was
// dialled (and reached whatever listened on that port here).
func TestWildcardMemberIsNeverDialled(t *testing.T) {
	u := newUnroutable(t, Config{})
	waitFor(t, 30*time.Second, "the members read from /zookeeper/config", func() bool { return len(members(u.c)) == 3 })
	port := portOf(t, u.zks.Addrs()[0]) // something listens there: a dial would connect
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	line := fmt.Sprintf("server.9=0.0.0.0:%d:%d:observer;0.0.0.0:%s", freePort(t), freePort(t), port)
	if err := u.zks.ReconfigLines(ctx, []string{line}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the new configuration read", func() bool {
		u.c.hosts.mu.Lock()
		defer u.c.hosts.mu.Unlock()
		_, ok := u.c.hosts.ids["server.9"]
		return ok
	})
	u.blips(t, 3)
	for addr, n := range u.dials.counts() {
		if host, _, _ := net.SplitHostPort(addr); isWildcard(host) {
			t.Errorf("the wildcard member %s dialled %d times", addr, n)
		}
	}
}

// freePort returns a loopback TCP port free now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}
