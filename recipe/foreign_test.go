package recipe_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
)

// httpServer accepts TCP connections and answers each, whatever it
// receives, with an HTTP 400 response, as a web server on a port given by
// mistake does.
func httpServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { answerHTTP(c) })
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	return l.Addr().String()
}

func answerHTTP(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Read(make([]byte, 1024)); err != nil {
		return
	}
	_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n400 Bad Request"))
}

func TestNonZooKeeperServerFailsConnectFast(t *testing.T) {
	// go-zookeeper reads "HTTP" as a frame length of 1,213,486,160 bytes
	// and allocates it; the session refuses the length first, and fails
	// Connect once every server has answered that way.
	addr := httpServer(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	s, err := recipe.Connect(context.Background(), []string{addr}, recipe.WithConnectTimeout(wait))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err == nil {
		s.Close()
		t.Fatal("connected to an HTTP server")
	}
	if !errors.Is(err, recipe.ErrNotZooKeeper) || !errors.Is(err, recipe.ErrUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("connect to an HTTP server: %v, want ErrNotZooKeeper and ErrUnreachable naming %s", err, addr)
	}
	if took > 5*time.Second {
		t.Fatalf("connect to an HTTP server failed after %v, want at once", took)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("connect to an HTTP server allocated %d MiB", grew>>20)
	}
	t.Logf("failed after %v: %v", took.Round(time.Millisecond), err)
}

func TestNonZooKeeperServerBesideARealOne(t *testing.T) {
	// Only a server list whose every entry is foreign fails fast.
	s := session(t, httpServer(t)+","+zkc.ConnectString())
	if !s.Connected() {
		t.Fatal("not connected through the real server")
	}
}

// TestNonZooKeeperServerBesideAClosedOneIsNamed: a foreign server beside a
// closed port breaks the streak that fails Connect fast, but Connect's
// timeout error still names the foreign one (a *NotZooKeeperError).
func TestNonZooKeeperServerBesideAClosedOneIsNamed(t *testing.T) {
	addr := httpServer(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	s, err := recipe.Connect(context.Background(), []string{addr, closedAddr}, recipe.WithConnectTimeout(2*time.Second))
	if err == nil {
		s.Close()
		t.Fatal("connected to an HTTP server and a closed port")
	}
	var nz *recipe.NotZooKeeperError
	if !errors.Is(err, recipe.ErrUnreachable) || !errors.As(err, &nz) || nz.Addr != addr {
		t.Fatalf("connect: %v; want ErrUnreachable and a NotZooKeeperError for %s", err, addr)
	}
	if !strings.Contains(err.Error(), addr+" is not a ZooKeeper server (it answered with another protocol") {
		t.Errorf("error %q does not say %s is not ZooKeeper", err, addr)
	}
}
