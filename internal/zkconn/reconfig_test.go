package zkconn

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

func TestParseMembers(t *testing.T) {
	for _, tc := range []struct {
		config string
		want   []member
	}{
		{"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.2:2888:3888:observer;2182\nversion=100000003\n",
			[]member{{"server.1", "127.0.0.1:2181"}, {"server.2", "127.0.0.2:2182"}}},
		{"server.1=zk1.example:2888:3888:participant;0.0.0.0:2181\n", []member{{"server.1", "zk1.example:2181"}}},
		{"server.3=[::1]:2888:3888;[::1]:2181\n", []member{{"server.3", "[::1]:2181"}}},
		// A wildcard for both hosts is this machine's own address: never dialled.
		{"server.1=0.0.0.0:2888:3888;0.0.0.0:2181\nserver.2=[::]:2888:3888;2181\nserver.3=zk3:2888:3888;[::]:2181\n",
			[]member{{"server.1", ""}, {"server.2", ""}, {"server.3", "zk3:2181"}}},
		{"server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\n", nil}, // static: no client addresses
		{"", nil},
	} {
		if got := parseMembers([]byte(tc.config)); !slices.Equal(got, tc.want) {
			t.Errorf("parseMembers(%q) = %q; want %q", tc.config, got, tc.want)
		}
	}
}

// waitFor polls cond until it holds, failing the test with what after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("waited %v for %s", d, what)
		}
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestReconfigurationIsFollowed: with a real reconfig, a server removed
// from the ensemble is not dialled again (0 connections to it over five
// reconnects, where the seed's rounds reach it), and after a server on new
// ports joins and every server of the seed leaves and is killed, the
// session carries on through the new server: same session, its ephemeral
// kept. Without following /zookeeper/config the client dialled only the
// seed and lost its session.
func TestReconfigurationIsFollowed(t *testing.T) {
	zks := testenv.New(t, testenv.Options{Servers: 3, SpareServers: 1, DynamicConfig: true, MaxSessionTimeout: 20 * time.Second})
	addrs := zks.Addrs()
	seed, spare := addrs[:3], addrs[3]
	proxy, err := testenv.ListenProxy(seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	dials := &dialCounter{n: map[string]int{}}
	var log logBuffer
	c := dialT(t, seed, Config{Timeout: 15 * time.Second, Log: zerolog.New(&log), Dialer: dials.wrap(proxy.Dialer())})
	path, stat := ephemeral(t, c, "reconfig")
	id := c.ID()
	waitFor(t, 30*time.Second, "the members read from /zookeeper/config", func() bool { return sameSet(members(c), seed) })

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := zks.Reconfig(ctx, nil, []int{2}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "server 2 dropped from the rounds", func() bool { return sameSet(members(c), seed[:2]) })
	removed := dials.counts()[seed[2]]
	for i := range 5 {
		before := sum(dials.counts())
		proxy.Cut()
		waitFor(t, 30*time.Second, "the session back after cut "+string(rune('1'+i)), func() bool {
			got, ok := c.Usable()
			return ok && got == id && sum(dials.counts()) > before
		})
	}
	if n := dials.counts()[seed[2]]; n != removed {
		t.Errorf("server 2, removed from the ensemble, dialled %d times over 5 reconnects; want 0 (%v)", n-removed, dials.counts())
	}

	if err := zks.Join(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := zks.Reconfig(ctx, nil, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the rounds on the joined server alone", func() bool { return sameSet(members(c), []string{spare}) })
	for i := range 3 {
		if err := zks.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "the session through the joined server", func() bool {
		got, ok := c.Usable()
		return ok && got == id && dials.counts()[spare] > 0
	})
	checkOwned(t, c, path, stat.Czxid, id)
	t.Logf("connections: %v", dials.counts())
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// members returns the members the host provider follows (nil: none read).
func members(c *Conn) []string {
	c.hosts.mu.Lock()
	defer c.hosts.mu.Unlock()
	return slices.Clone(c.hosts.members)
}
