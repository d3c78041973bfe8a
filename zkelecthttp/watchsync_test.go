package zkelecthttp_test

import (
	"bufio"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zkelecthttp"
)

// TestWatchIsNotVouchedForUntilTheRootIsReadAgainAfterAReconnect: the
// member's link to ZooKeeper is cut and its reconnection answers only
// pings (the tree watch's re-add and the root's listing go unanswered),
// so its session is connected but its picture cannot be in sync. While
// it is so, /v1/watch must refuse a stream with 503 (and so send no
// heartbeat), not vouch for the pre-cut picture because the session is
// connected; once the link heals and the root is read again, a stream
// opens and gets heartbeats.
func TestWatchIsNotVouchedForUntilTheRootIsReadAgainAfterAReconnect(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	shards := partition.Range(0, 4)
	m := startMember(t, proxy.Addrs(), testPath(t), "a", shards, zkelecthttp.ShardsOptions{})
	eventually(t, 30*time.Second, "a stream with a heartbeat once a leads every shard", func() bool {
		return len(m.mgr.Leaderships()) == len(shards) && heartbeatSeen(t, m.url) == http.StatusOK
	})

	if err := proxy.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	reconnected := m.sess.NextConnect()
	proxy.Cut()
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out after 30s waiting for the member's session to reconnect (pings only)")
	}
	var last int
	eventually(t, 20*time.Second, "/v1/watch to answer 503 while the session is connected (pings only)", func() bool {
		before := m.sess.Connected()
		last = heartbeatSeen(t, m.url)
		return before && m.sess.Connected() && last == http.StatusServiceUnavailable
	})

	proxy.Heal() // the unanswered requests stay so: the request deadline ends that connection
	eventually(t, 60*time.Second, "a stream with a heartbeat once the root is read again", func() bool {
		return heartbeatSeen(t, m.url) == http.StatusOK
	})
}

// heartbeatSeen opens /v1/watch with a 100ms heartbeat and returns its
// status; for a 200, only once a heartbeat came within 5s (else 0).
func heartbeatSeen(t *testing.T, url string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/watch?heartbeat=100ms", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if sc.Text() == ": keep-alive" {
			return http.StatusOK
		}
	}
	return 0
}

// TestOpenWatchStopsHeartbeatingWhileOutOfSync: a /v1/watch stream is
// open (heartbeat 100ms) when the member's link to ZooKeeper is cut and
// its reconnection answers only pings, so its session is connected but
// its picture cannot be read again. The open stream must send no
// heartbeat while so (a router counting heartbeats as freshness then
// leaves the daemon), and heartbeat again, on the same stream, once the
// link heals and the root is read again.
func TestOpenWatchStopsHeartbeatingWhileOutOfSync(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	shards := partition.Range(0, 4)
	m := startMember(t, proxy.Addrs(), testPath(t), "a", shards, zkelecthttp.ShardsOptions{})
	eventually(t, 30*time.Second, "a stream with a heartbeat once a leads every shard", func() bool {
		return len(m.mgr.Leaderships()) == len(shards) && heartbeatSeen(t, m.url) == http.StatusOK
	})
	beats := openBeats(t, m.url)
	select {
	case <-beats:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out after 10s waiting for a heartbeat on the open stream")
	}

	if err := proxy.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	reconnected := m.sess.NextConnect()
	proxy.Cut()
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out after 30s waiting for the member's session to reconnect (pings only)")
	}
	again := m.sess.NextConnect() // the request deadline ends the pings-only connection after a session timeout (2s here)
	// The window: from 300ms after the reconnect (a heartbeat sent before
	// the cut has been read by then) to 1.1s after it, 8 heartbeats long.
	settle := time.After(300 * time.Millisecond)
	for drained := false; !drained; {
		select {
		case <-beats:
		case <-settle:
			drained = true
		}
	}
	window := time.After(800 * time.Millisecond)
	for open := true; open; {
		select {
		case at := <-beats:
			t.Fatalf("a heartbeat at %s on the open stream while the member's session is connected but its picture not read again since the reconnect (connected now: %v)",
				at.Format("15:04:05.000"), m.sess.Connected())
		case <-again:
			t.Fatal("the pings-only connection ended within the window (before its request deadline of a session timeout): the window did not show a connected session out of sync")
		case <-window:
			open = false
		}
	}
	if !m.sess.Connected() {
		t.Fatal("the member's session is not connected at the window's end: the window did not show a connected session out of sync")
	}

	proxy.Heal()
	select {
	case <-beats:
	case <-time.After(60 * time.Second):
		t.Fatal("timed out after 60s waiting for a heartbeat on the same stream once the link healed and the root was read again")
	}
}

// openBeats opens /v1/watch with a 100ms heartbeat, kept open until the
// end of the test, and sends the time each heartbeat was read.
func openBeats(t *testing.T, url string) <-chan time.Time {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/watch?heartbeat=100ms", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open /v1/watch: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		t.Fatalf("open /v1/watch: %s", resp.Status)
	}
	beats := make(chan time.Time, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if sc.Text() == ": keep-alive" {
				select {
				case beats <- time.Now():
				default:
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return beats
}
