package recipe_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
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

func TestHandshakesWithASlowLinkConverge(t *testing.T) {
	// A's link to every server gets 300 ms of latency each way, then a cut.
	// Its handshakes then take over 600 ms, more than the first bound (a
	// third of the 2 s session shared by three servers). A bound that never
	// grows abandons every handshake after the connect request reached a
	// server, which renews the session: A never reconnects, its session
	// never expires, its znode stays first, and nobody leads. Within a few
	// session timeouts A must lead again, or B must.
	const timeout = 2 * time.Second
	ens := testenv.New(t, testenv.Options{Servers: 3})
	path := electionPath(t)
	p := ens.NewProxyT(t)
	a := candidate(t, session(t, p.ConnectString(), recipe.WithSessionTimeout(timeout)), path)
	la := lead(t, a)
	b := candidate(t, session(t, ens.ConnectString(), recipe.WithSessionTimeout(timeout)), path)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	bres := campaignAsync(ctx, b)

	p.SetLatency(300 * time.Millisecond)
	p.SetRequestLatency(300 * time.Millisecond)
	p.Cut()
	cut := time.Now()
	awaitEnd(t, la, "A's leadership to end at the cut")
	ares := campaignAsync(ctx, a)
	const within = 5 * timeout
	select {
	case r := <-ares:
		if r.err != nil {
			t.Fatalf("A's campaign: %v", r.err)
		}
		t.Logf("A leads again %v after the cut (token %v, was %v)", r.at.Sub(cut), r.lead.Token(), la.Token())
	case r := <-bres:
		if r.err != nil {
			t.Fatalf("B's campaign: %v", r.err)
		}
		t.Logf("B leads %v after the cut", r.at.Sub(cut))
	case <-time.After(within):
		t.Fatalf("no candidate led within %v of the cut over a link slow both ways (A's handshakes never converged)", within)
	}
}
