package zkconn

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// TestSlowResolverStillConnects: the servers' names are answered by a DNS
// server that takes 1.5s (10s sessions, one name) or 600ms (4s sessions,
// three names), correctly: Dial succeeds, five reconnects keep the
// session, and the slow resolver is logged. Before, each lookup was bounded
// by a slice of the handshake's bound (1s, 444ms): every attempt said
// "does not resolve" and Dial failed at its connect timeout.
func TestSlowResolverStillConnects(t *testing.T) {
	for _, tc := range []struct {
		name           string
		timeout, delay time.Duration
		names          int
	}{
		{"1500ms_at_T10s", 10 * time.Second, 1500 * time.Millisecond, 1},
		{"600ms_at_T4s", 4 * time.Second, 600 * time.Millisecond, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.WithPrivateHosts(t, func(t *testing.T, h *testenv.Hosts) {
				slowResolver(t, h, tc.timeout, tc.delay, tc.names)
			})
		})
	}
}

func slowResolver(t *testing.T, h *testenv.Hosts, timeout, delay time.Duration, names int) {
	dns, err := testenv.StartDNS()
	if err != nil {
		t.Skipf("no DNS server on loopback: %v", err)
	}
	t.Cleanup(func() { _ = dns.Close() })
	if err := h.UseNameserver(dns.IP()); err != nil {
		t.Skipf("no private resolv.conf: %v", err)
	}
	p := proxyAt(t, "127.0.0.1:0")
	port := portOf(t, p.Addrs()[0])
	var servers []string
	for i := range names {
		name := fmt.Sprintf("zk-slow-%d.test", i)
		dns.Set(name, "127.0.0.1")
		servers = append(servers, name+":"+port)
	}
	dns.SetDelay(delay)
	var log logBuffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()
	c, err := Dial(ctx, servers, Config{Timeout: timeout, ConnectTimeout: 10 * time.Second, Log: zerolog.New(&log)})
	if err != nil {
		t.Fatalf("Dial %v with a resolver answering after %v: %v\nlog:\n%s", servers, delay, err, log.String())
	}
	defer c.Close()
	t.Logf("connected in %v (%d queries)", time.Since(start).Round(time.Millisecond), dns.Queries())
	id := c.ID()
	for i := range 5 {
		next := c.NextConnect()
		start := time.Now()
		p.Cut()
		select {
		case <-next:
		case <-time.After(time.Minute):
			t.Fatalf("reconnect %d: none within a minute; log:\n%s", i+1, log.String())
		}
		if got := c.ID(); got != id {
			t.Fatalf("reconnect %d: session %#x lost (now %#x); log:\n%s", i+1, id, got, log.String())
		}
		t.Logf("reconnect %d in %v", i+1, time.Since(start).Round(time.Millisecond))
	}
	if l := log.String(); !strings.Contains(l, "lookup is slow") {
		t.Errorf("the slow resolver was not logged; log:\n%s", l)
	}
}
