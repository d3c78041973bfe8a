package routing_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zkelecthttp"
)

var zkc *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
}

func testRoot(t *testing.T) string {
	return "/routing/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + time.Now().Format("150405.000000")
}

// connect opens a session closed at the end of the test.
func connect(t *testing.T, opts ...recipe.SessionOption) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s, err := recipe.Connect(ctx, zkc.Addrs(), append([]recipe.SessionOption{recipe.WithSessionTimeout(4 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// member is one partition member run by a test; stop ends it gracefully
// (its shards resigned), once.
type member struct {
	mgr  *partition.Manager
	sess *recipe.Session
	stop func()
}

func runMember(t *testing.T, root, id string, shards []string) *member {
	t.Helper()
	return runMemberOn(t, connect(t), root, id, shards)
}

// runMemberOn is runMember on sess.
func runMemberOn(t *testing.T, sess *recipe.Session, root, id string, shards []string) *member {
	t.Helper()
	mgr, err := partition.NewManager(sess, root, partition.Config{MemberID: id, Shards: shards, Address: id + ".example:8080", Labels: map[string]string{"zone": id}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("Run of %s: %v", id, err)
			}
		})
	}
	t.Cleanup(stop)
	return &member{mgr: mgr, sess: sess, stop: stop}
}

// runClient runs c until the end of the test.
func runClient(t *testing.T, c *routing.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Client.Run: %v", err)
		}
	})
}

// eventually polls cond until it holds, failing after limit with what
// was awaited.
func eventually(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last: %s", limit, what, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// allRoutedTo reports whether every shard routes to member.
func allRoutedTo(c *routing.Client, shards []string, member string) (bool, string) {
	for _, s := range shards {
		r, err := c.Leader(s)
		if err != nil || r.Member != member {
			return false, s + " -> " + r.Member + " " + errString(err)
		}
	}
	return true, ""
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// gate makes a daemon's HTTP answers hang while closed, as a paused
// daemon's do: its streams go silent without closing.
type gate struct {
	mu      sync.Mutex
	paused  chan struct{} // non-nil while paused: closed by resume
	streams int           // /v1/watch requests being served
}

// streaming returns how many /v1/watch streams the daemon serves.
func (g *gate) streaming() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams
}

func (g *gate) addStream(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.streams += n
}

func (g *gate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused == nil {
		g.paused = make(chan struct{})
	}
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused != nil {
		close(g.paused)
		g.paused = nil
	}
}

func (g *gate) wait() {
	g.mu.Lock()
	ch := g.paused
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// gatedWriter blocks every write and flush while its gate is paused.
type gatedWriter struct {
	http.ResponseWriter
	g *gate
}

func (w gatedWriter) Write(b []byte) (int, error) { w.g.wait(); return w.ResponseWriter.Write(b) }
func (w gatedWriter) Flush() {
	w.g.wait()
	w.ResponseWriter.(http.Flusher).Flush()
}

// serveDaemon serves m's zkelecthttp endpoints, as `zkelect shards` does,
// behind g, until the end of the test; it returns the base URL.
func serveDaemon(t *testing.T, root, id string, shards []string, m *member, g *gate) string {
	t.Helper()
	api, err := zkelecthttp.NewShards(m.sess, m.mgr, zkelecthttp.ShardsOptions{Root: root, Member: id, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/watch" {
			g.addStream(1)
			defer g.addStream(-1)
		}
		mux.ServeHTTP(gatedWriter{w, g}, r)
	})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- srv.Serve(ln) }()
	go func() { done <- api.Run(ctx) }()
	t.Cleanup(func() {
		g.resume()
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		srv.Shutdown(sctx)
		<-done
		<-done
	})
	return "http://" + ln.Addr().String()
}
