package recipe_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// switchProxy forwards every connection to its current target; Switch
// drops the connections and sends new ones to another server, as if the
// ensemble behind one address had been wiped and redeployed.
type switchProxy struct {
	l      net.Listener
	mu     sync.Mutex
	target string
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newSwitchProxy(t *testing.T, target string) *switchProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &switchProxy{l: l, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *switchProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

func (p *switchProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (p *switchProxy) Switch(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *switchProxy) close() {
	p.l.Close()
	p.Switch("")
	p.wg.Wait()
}

func TestWipedEnsembleGetsANewSession(t *testing.T) {
	path := electionPath(t)
	p := newSwitchProxy(t, zkc.Addrs()[0])
	s := session(t, p.l.Addr().String())
	c := candidate(t, s, path)
	l := lead(t, c)
	old := s.ID()

	// A fresh server has seen far fewer transactions than the shared one:
	// it refuses the client's session (and its zxid) on every attempt.
	fresh := testenv.New(t, testenv.Options{Servers: 1})
	start := time.Now()
	p.Switch(fresh.Addrs()[0])
	awaitEnd(t, l, "leadership to end when the ensemble went away")

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	l2, err := c.Campaign(ctx)
	if err != nil {
		t.Fatalf("no leadership on the redeployed ensemble: %v", err)
	}
	if s.ID() == old || l2.SessionID() != s.ID() {
		t.Fatalf("session %x -> %x, leadership on %x", old, s.ID(), l2.SessionID())
	}
	if !s.HeldBefore(old) || s.HeldBefore(s.ID()) || s.HeldBefore(0) {
		t.Fatalf("HeldBefore(old %x, current %x, 0) = %v, %v, %v; want true, false, false",
			old, s.ID(), s.HeldBefore(old), s.HeldBefore(s.ID()), s.HeldBefore(0))
	}
	t.Logf("new session %x %v after the wipe; leads on %s", s.ID(), time.Since(start), l2.Znode())
	_ = recipe.ErrSessionExpired
}
