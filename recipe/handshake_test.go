package recipe_test

import (
	"net"
	"sync"
	"testing"
)

// silentServer accepts TCP connections and never answers, like a server
// whose process is stopped while the kernel still completes handshakes.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var held []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		for _, c := range held {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestSilentServerDoesNotCostTheSession(t *testing.T) {
	// The client knows two servers: a silent one and (through a proxy) the
	// real one. go-zookeeper tries them in turn; each time the real one's
	// connection is cut, the next attempt may hit the silent one, whose
	// handshake must give up in time to reach the real one before the
	// session expires.
	path := electionPath(t)
	p := zkc.NewProxyT(t)
	s := session(t, silentServer(t)+","+p.ConnectString())
	c := candidate(t, s, path)
	l := lead(t, c)
	id := s.ID()
	for i := 0; i < 3; i++ {
		p.Cut()
		awaitEnd(t, l, "suspension at the cut")
		l2 := lead(t, c)
		if s.ID() != id || l2.Token() != l.Token() {
			t.Fatalf("cut %d: session %x -> %x, token %v -> %v: the session did not survive", i, id, s.ID(), l.Token(), l2.Token())
		}
		l = l2
	}
}
