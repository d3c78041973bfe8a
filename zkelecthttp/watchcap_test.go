package zkelecthttp_test

import (
	"bufio"
	"context"
	"io"
	"maps"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zkelecthttp"
)

// TestWatchStreamsBeyondTheCapAreRefused opens 250 /v1/watch streams at
// once against a cap of 50: exactly 50 stream (each got the owners
// snapshot) and 200 are refused with 503, a reason and a Retry-After; the
// hub feeds 50 subscribers, no more; the member keeps leading every shard
// with the same tokens and stays healthy; once the streams close, a new
// one is served again. (Clients and member share one process under -race:
// 500 clients starved the member's 2 s session at load 20.)
func TestWatchStreamsBeyondTheCapAreRefused(t *testing.T) {
	const clients, maxStreams = 250, 50
	shards := partition.Range(0, 8)
	m := startMember(t, zkc.Addrs(), testPath(t), "m1", shards, zkelecthttp.ShardsOptions{MaxWatchStreams: maxStreams})
	eventually(t, 30*time.Second, "/v1/owners to be served with every shard led", func() bool {
		code, _ := get(t, m.url+"/v1/owners")
		return code == http.StatusOK && len(m.mgr.Leaderships()) == len(shards)
	})
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	// /v1/watch serves only once the member's picture is in sync (read
	// after /v1/owners may be): the storm starts from there.
	eventually(t, 30*time.Second, "/v1/watch to stream (the picture in sync)", func() bool {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		kind, _ := watchOnce(ctx, client, m.url, cancel)
		return kind == "stream"
	})
	eventually(t, 10*time.Second, "the probing stream to be let go", func() bool {
		return zkelecthttp.WatchSubscribers(m.api) == 0 && zkelecthttp.WatchStreamsOpen(m.api) == 0
	})
	before := m.mgr.Leaderships()
	heapBefore, goBefore := heapInUse(), runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(t.Context())
	var (
		mu                 sync.Mutex
		streaming, refused int
		other              []string
		answered, closed   sync.WaitGroup
	)
	for range clients {
		answered.Add(1)
		closed.Add(1)
		go func() {
			defer closed.Done()
			kind, body := watchOnce(ctx, client, m.url, answered.Done)
			mu.Lock()
			defer mu.Unlock()
			switch kind {
			case "stream":
				streaming++
			case "refused":
				refused++
			default:
				other = append(other, body)
			}
		}()
	}
	answered.Wait() // every client has its answer; the streams are open
	subs := zkelecthttp.WatchSubscribers(m.api)
	heapDuring, goDuring := heapInUse(), runtime.NumGoroutine()
	code, health := get(t, m.url+"/healthz")
	cancel()
	closed.Wait()

	t.Logf("%d clients, cap %d: %d streamed, %d refused; hub subscribers %d; heap in use %d KiB -> %d KiB, goroutines %d -> %d (clients and server in one process)",
		clients, maxStreams, streaming, refused, subs, heapBefore>>10, heapDuring>>10, goBefore, goDuring)
	if streaming != maxStreams || refused != clients-maxStreams || len(other) > 0 {
		t.Errorf("%d streamed, %d refused, other answers %q; want %d and %d", streaming, refused, other, maxStreams, clients-maxStreams)
	}
	if subs != maxStreams {
		t.Errorf("the hub fed %d subscribers, want the cap, %d", subs, maxStreams)
	}
	if code != http.StatusOK {
		t.Errorf("/healthz during the storm: %d %s", code, health)
	}
	if after := m.mgr.Leaderships(); !maps.Equal(before, after) {
		t.Errorf("leaderships changed over the storm: %v, then %v", before, after)
	}
	eventually(t, 10*time.Second, "a new stream to be served once the others closed", func() bool {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		kind, _ := watchOnce(ctx, client, m.url, cancel) // ends the stream once served
		return kind == "stream"
	})
}

// watchOnce opens /v1/watch and calls answered once it knows the outcome:
// "stream" (200 and the owners snapshot read; it then holds the stream
// until ctx ends), "refused" (503 naming the cap, with a Retry-After), or
// anything else with what came back. A 503 "not in sync" is asked again,
// as a client does after its Retry-After: the storm of these tests, in
// one process with the member under -race on a loaded machine, can starve
// the member's ZooKeeper connection until it drops, and a member whose
// picture is not in sync vouches for no stream.
func watchOnce(ctx context.Context, client *http.Client, url string, answered func()) (kind, body string) {
	once := sync.OnceFunc(answered)
	defer once()
	for {
		kind, body = watchAttempt(ctx, client, url, once)
		if kind != "unvouched" {
			return kind, body
		}
		select {
		case <-ctx.Done():
			return "other", body
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// watchAttempt is one request of watchOnce; "unvouched" for a 503 "not in
// sync".
func watchAttempt(ctx context.Context, client *http.Client, url string, once func()) (kind, body string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/watch", nil)
	if err != nil {
		return "error", err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return "error", err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		b, _ := io.ReadAll(resp.Body)
		switch {
		case strings.Contains(string(b), "too many /v1/watch streams") && resp.Header.Get("Retry-After") != "":
			return "refused", string(b)
		case strings.Contains(string(b), "not in sync"):
			return "unvouched", string(b)
		}
		return "other", resp.Status + " " + string(b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if sc.Text() == "event: owners" {
			once()
			_, _ = io.Copy(io.Discard, resp.Body) // hold the stream until ctx ends
			return "stream", ""
		}
	}
	return "other", resp.Status + " without an owners event"
}

// heapInUse returns the heap in use after a collection, in bytes.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
