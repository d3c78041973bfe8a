package zkconn

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestReconnectDoesNotPauseASecondPerRound: the only server refuses
// connections (its proxy closed) until the client has dialled it three
// times, then listens again at the same address; a 2s session is kept.
// Before, go-zookeeper paused a second before each redial of a server
// that did not answer: three dials took over 2s and the session expired.
func TestReconnectDoesNotPauseASecondPerRound(t *testing.T) {
	p := proxyAt(t, "127.0.0.1:0")
	addr := p.Addrs()[0]
	var dials atomic.Int32
	dialer := func(network, a string, timeout time.Duration) (net.Conn, error) {
		dials.Add(1)
		return net.DialTimeout(network, a, timeout)
	}
	var log logBuffer
	c := dialT(t, []string{addr}, Config{Timeout: 2 * time.Second, Log: zerolog.New(&log), Dialer: dialer})
	path, stat := ephemeral(t, c, "pause")
	id := c.ID()
	before := dials.Load()
	start := time.Now()
	_ = p.Close() // the connection cut, then refused
	waitFor(t, time.Minute, "three dials of the refusing server", func() bool { return dials.Load()-before >= 3 })
	t.Logf("three dials in %v", time.Since(start).Round(time.Millisecond))
	back := proxyAt(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := awaitSessionVia(ctx, c, back, id); err != nil {
		t.Fatalf("session %#x after the server listened again: %v\nlog:\n%s", id, err, log.String())
	}
	checkOwned(t, c, path, stat.Czxid, id)
}

// TestRoundPause: the pause after a round in which no server answered is
// a twentieth of the session timeout, 50ms to 1s.
func TestRoundPause(t *testing.T) {
	for _, tc := range []struct{ timeout, want time.Duration }{
		{2 * time.Second, 100 * time.Millisecond},
		{500 * time.Millisecond, 50 * time.Millisecond},
		{10 * time.Second, 500 * time.Millisecond},
		{40 * time.Second, time.Second},
	} {
		if got := roundPause(tc.timeout); got != tc.want {
			t.Errorf("roundPause(%v) = %v, want %v", tc.timeout, got, tc.want)
		}
	}
}
