package zkelecthttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zkelecthttp"
)

// zkc is the standalone ZooKeeper server shared by the package's tests.
var zkc *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
}

// testPath is a fresh znode path for one test.
func testPath(t *testing.T) string {
	return "/zkelecthttp/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + time.Now().Format("150405.000000")
}

// connect opens a session to servers (the cluster's, or a proxy's),
// closed at the end of the test.
func connect(t *testing.T, servers []string) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s, err := recipe.Connect(ctx, servers, recipe.WithSessionTimeout(2*time.Second))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// runManager starts a Manager for member on sess and stops it at the end of
// the test.
func runManager(t *testing.T, sess *recipe.Session, root string, cfg partition.Config) *partition.Manager {
	t.Helper()
	mgr, err := partition.NewManager(sess, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	return mgr
}

// serve runs h on a real server (zkelecthttp.NewServer) on a loopback port
// until the end of the test and returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := zkelecthttp.NewServer(h)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
		http.DefaultClient.CloseIdleConnections()
	})
	return "http://" + ln.Addr().String()
}

// runShards starts api.Run until the end of the test.
func runShards(t *testing.T, api *zkelecthttp.Shards) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- api.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Shards.Run: %v", err)
		}
	})
}

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// getJSON fetches url into v, failing on anything but 200.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	code, body := get(t, url)
	if err := json.Unmarshal([]byte(body), v); code != http.StatusOK || err != nil {
		t.Fatalf("GET %s: %d %v: %s", url, code, err, body)
	}
}

// eventually polls cond until it holds, failing after limit with what was
// awaited.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
