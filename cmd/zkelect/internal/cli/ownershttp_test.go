package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event as /v1/watch writes it.
type sseEvent struct {
	rawID string // as sent: <stream>-<seq>
	id    uint64
	kind  string
	data  string
	token uint64 // leader events: the token, 0 for "no leader"
	shard string
}

// sseClient reads a /v1/watch stream into events until its ctx ends.
type sseClient struct {
	mu     sync.Mutex
	events []sseEvent
	done   chan struct{}
}

// watchSSE opens url's /v1/watch (resuming after lastID unless empty),
// retrying a 503 for up to 30s: the daemon refuses streams until its
// picture of the root is in sync (read first, or again after a reconnect).
func watchSSE(t *testing.T, ctx context.Context, url string, lastID string) *sseClient {
	t.Helper()
	var resp *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		req, err := http.NewRequestWithContext(ctx, "GET", url+"/v1/watch", nil)
		if err != nil {
			t.Fatal(err)
		}
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatalf("GET /v1/watch: %v", err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET /v1/watch: %d %s", resp.StatusCode, ct)
	}
	c := &sseClient{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.rawID = line[4:]
				_, seq, _ := strings.Cut(ev.rawID, "-")
				ev.id, _ = strconv.ParseUint(seq, 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			case line == "" && ev.kind != "":
				if ev.kind == "leader" {
					var le leaderEvent
					_ = json.Unmarshal([]byte(ev.data), &le)
					ev.shard = le.Shard
					if le.Token != nil {
						ev.token, _ = strconv.ParseUint(le.Token.Decimal, 10, 64)
					}
				}
				c.mu.Lock()
				c.events = append(c.events, ev)
				c.mu.Unlock()
				ev = sseEvent{}
			}
		}
	}()
	return c
}

func (c *sseClient) snapshot() []sseEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sseEvent(nil), c.events...)
}

// verb runs `zkelect shards <args>` and returns its stdout.
func runVerbCLI(t *testing.T, root string, args ...string) string {
	t.Helper()
	p := startProc(t, "shards "+args[0], append(append([]string{"shards"}, args...), "--zk", zkc.ConnectString(), "--root", root))
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("shards %v exited %d: %s", args, code, p.err.String())
	}
	return p.out.String()
}

// ownersOf reads a daemon's /v1/owners.
func ownersOf(t *testing.T, d *daemon) rootStatus {
	t.Helper()
	code, body := d.get(t, "/v1/owners")
	var st rootStatus
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("/v1/owners: %d %v: %s", code, err, body)
	}
	return st
}

// TestShardsOwnersAndWatchFollowOperatorVerbs runs daemons as separate
// processes and changes them with the operator verbs: /v1/owners shows
// addresses, weights, labels, drains and the freeze; /v1/watch delivers
// every leader change of the churn in order (ids consecutive, tokens
// increasing per shard) and ends in the state /v1/owners shows; a client
// resuming with Last-Event-ID gets exactly the events after it.
func TestShardsOwnersAndWatchFollowOperatorVerbs(t *testing.T) {
	const n = 12
	root := testPath(t)
	m1 := startDaemonWith(t, root, "m1", n, []string{"--advertise", "m1.example:8080", "--label", "zone=a"})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stream := watchSSE(t, ctx, m1.url, "")
	startDaemonWith(t, root, "m2", n, []string{"--advertise", "m2.example:8080", "--weight", "2"})
	s := testSession(t)
	eventually(t, 30*time.Second, "m1 and m2 leading 4 and 8 shards", func() bool {
		c := map[string]int{}
		for _, o := range owners(t, s, root) {
			c[o.Member]++
		}
		return c["m1"] == 4 && c["m2"] == 8
	})

	if out := runVerbCLI(t, root, "drain", "--member", "m2", "--reason", "kernel upgrade", "--wait"); !strings.Contains(out, "drained member m2; it leads nothing now") {
		t.Errorf("drain --wait printed %q", out)
	}
	if out := runVerbCLI(t, root, "drain", "--member", "m2"); !strings.Contains(out, "nothing changed") {
		t.Errorf("a second drain printed %q, want nothing changed", out)
	}
	eventually(t, 10*time.Second, "/v1/owners to show m2 drained and m1 leading all", func() bool {
		st := ownersOf(t, m1)
		for _, m := range st.MemberList {
			if m.Member == "m2" && (!m.Drained || m.DrainReason != "kernel upgrade" || m.Weight != 2 || m.Address != "m2.example:8080") {
				return false
			}
		}
		return st.Members["m1"] == n && len(st.MemberList) == 2
	})
	runVerbCLI(t, root, "freeze", "--for", "1h", "--reason", "window")
	st := ownersOf(t, m1)
	eventually(t, 10*time.Second, "/v1/owners to show the freeze", func() bool {
		st = ownersOf(t, m1)
		return st.Frozen != nil && st.Frozen.Reason == "window" && st.Frozen.Until != nil
	})
	runVerbCLI(t, root, "unfreeze")
	runVerbCLI(t, root, "undrain", "--member", "m2")
	m3 := startDaemonWith(t, root, "m3", n, nil)
	eventually(t, 30*time.Second, "m1, m2 and m3 leading 3, 6 and 3", func() bool {
		c := map[string]int{}
		for _, o := range owners(t, s, root) {
			c[o.Member]++
		}
		return c["m1"] == 3 && c["m2"] == 6 && c["m3"] == 3
	})
	runVerbCLI(t, root, "move", "--shard", "0", "--to", "m3")
	m3.signal(syscall.SIGTERM)
	if code := m3.wait(20 * time.Second); code != 0 {
		t.Errorf("m3 exited %d", code)
	}
	eventually(t, 30*time.Second, "m1 and m2 leading every shard again, in /v1/owners", func() bool {
		st = ownersOf(t, m1)
		return st.Members["m1"]+st.Members["m2"] == n
	})
	eventually(t, 10*time.Second, "the stream to end in /v1/owners' state", func() bool {
		return sameLeaders(stream.snapshot(), st)
	})
	evs := stream.snapshot()
	if evs[0].kind != "owners" {
		t.Fatalf("first event %q, want the owners snapshot", evs[0].kind)
	}
	last := map[string]uint64{}
	for i, ev := range evs[1:] {
		if ev.id != evs[i].id+1 {
			t.Errorf("event %d has id %d after %d: a gap", i+1, ev.id, evs[i].id)
		}
		if ev.token != 0 && ev.token <= last[ev.shard] {
			t.Errorf("shard %s: token %d after %d", ev.shard, ev.token, last[ev.shard])
		}
		if ev.token != 0 {
			last[ev.shard] = ev.token
		}
	}
	t.Logf("%d leader events over the churn", len(evs)-1)
	mid := evs[len(evs)/2]
	resumed := watchSSE(t, ctx, m1.url, mid.rawID)
	want := evs[len(evs)/2+1:]
	eventually(t, 10*time.Second, "the resumed stream to replay the events after its id", func() bool {
		return len(resumed.snapshot()) >= len(want)
	})
	for i, ev := range resumed.snapshot()[:len(want)] {
		if ev.id != want[i].id || ev.data != want[i].data {
			t.Fatalf("resumed event %d: id %d %s, want id %d %s", i, ev.id, ev.data, want[i].id, want[i].data)
		}
	}
	other := watchSSE(t, ctx, m1.url, "another-stream-"+fmt.Sprint(mid.id)) // ids of another daemon
	eventually(t, 10*time.Second, "an id of another stream to get a snapshot first", func() bool {
		evs := other.snapshot()
		return len(evs) > 0 && evs[0].kind == "owners"
	})
	checkRootStatus(t, root, n, map[string]int{"m1": st.Members["m1"], "m2": st.Members["m2"]})
}

// sameLeaders reports whether the stream's last word on every shard is
// the leader /v1/owners shows.
func sameLeaders(evs []sseEvent, st rootStatus) bool {
	if len(evs) == 0 || evs[0].kind != "owners" {
		return false
	}
	var snap rootStatus
	if json.Unmarshal([]byte(evs[0].data), &snap) != nil {
		return false
	}
	lead := map[string]string{}
	for _, s := range snap.Shards {
		lead[s.Shard] = s.Leader
	}
	for _, ev := range evs[1:] {
		var le leaderEvent
		_ = json.Unmarshal([]byte(ev.data), &le)
		lead[le.Shard] = ""
		if le.Leader != nil {
			lead[le.Shard] = *le.Leader
		}
	}
	for _, s := range st.Shards {
		if lead[s.Shard] != s.Leader {
			return false
		}
	}
	return true
}

// TestShardsRefusesWatchStreamsBeyondTheCap: with --max-watch-streams 1,
// a second /v1/watch while one is open gets 503 naming the cap, and the
// daemon stays healthy.
func TestShardsRefusesWatchStreamsBeyondTheCap(t *testing.T) {
	d := startDaemonWith(t, testPath(t), "m1", 2, []string{"--max-watch-streams", "1"})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	watchSSE(t, ctx, d.url, "")
	if code, body := d.get(t, "/v1/watch"); code != http.StatusServiceUnavailable || !strings.Contains(body, "too many /v1/watch streams: 1 already open") {
		t.Errorf("a second /v1/watch over a cap of 1: %d %q, want 503 naming the cap", code, body)
	}
	if code, body := d.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz beside a refused stream: %d %s", code, body)
	}
}

// TestShardsClosesIdleConnections: a keep-alive connection left idle is
// closed by the daemon after --http-idle-timeout (Go's default keeps it
// forever).
func TestShardsClosesIdleConnections(t *testing.T) {
	d := startDaemonWith(t, testPath(t), "m1", 1, []string{"--http-idle-timeout", "500ms"})
	conn, err := net.Dial("tcp", strings.TrimPrefix(d.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: zkelect\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(20 * time.Second)) // bounds the wait, far above the timeout
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("idle keep-alive connection: read %v, want EOF from the daemon closing it", err)
	}
	t.Logf("idle connection closed by the daemon after %v", time.Since(start).Round(time.Millisecond))
}
