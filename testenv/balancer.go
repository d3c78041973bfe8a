package testenv

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Balancer is one loopback address in front of several ZooKeeper servers,
// as a Kubernetes Service's ClusterIP or a TCP load balancer is: each
// connection it accepts goes to the next target in turn (round-robin,
// skipping a target it cannot dial), and the client cannot tell which
// server it reached. Methods are safe for concurrent use; Close stops it.
type Balancer struct {
	targets []string
	l       net.Listener
	wg      sync.WaitGroup

	mu     sync.Mutex
	next   int
	conns  map[net.Conn]struct{}
	closed bool
}

// ListenBalancer starts a balancer on 127.0.0.1 in front of targets
// ("host:port" each), the first connection going to targets[0]. It fails
// with ErrBadOptions without a target. The caller must Close it.
func ListenBalancer(targets []string) (*Balancer, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("%w: a balancer needs at least one target", ErrBadOptions)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("balancer listen: %w", err)
	}
	b := &Balancer{targets: append([]string(nil), targets...), l: l, conns: map[net.Conn]struct{}{}}
	b.wg.Go(b.accept)
	return b, nil
}

// Addr returns the balancer's address: give it to the client as its only
// server.
func (b *Balancer) Addr() string { return b.l.Addr().String() }

// Cut closes every connection through the balancer, both ways; new
// connections are accepted (and go to the next targets in turn).
func (b *Balancer) Cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.conns {
		_ = c.Close()
	}
}

// Close stops the listener, closes every connection and waits for the
// balancer's goroutines. It is idempotent.
func (b *Balancer) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	err := b.l.Close()
	b.Cut()
	b.wg.Wait()
	if errors.Is(err, net.ErrClosed) { // closed before
		return nil
	}
	return err
}

func (b *Balancer) accept() {
	for {
		c, err := b.l.Accept()
		if err != nil {
			return
		}
		s, err := b.dialNext()
		if err != nil {
			_ = c.Close()
			continue
		}
		if !b.track(c, s) {
			return
		}
		b.wg.Go(func() { b.pipe(c, s) })
		b.wg.Go(func() { b.pipe(s, c) })
	}
}

// dialNext dials the next target in turn, trying each once.
func (b *Balancer) dialNext() (net.Conn, error) {
	var err error
	for range b.targets {
		b.mu.Lock()
		t := b.targets[b.next%len(b.targets)]
		b.next++
		b.mu.Unlock()
		var s net.Conn
		if s, err = net.DialTimeout("tcp", t, balancerDialTimeout); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// track records a pair of connections; false (both closed) after Close.
func (b *Balancer) track(c, s net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		_ = c.Close()
		_ = s.Close()
		return false
	}
	b.conns[c], b.conns[s] = struct{}{}, struct{}{}
	return true
}

func (b *Balancer) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
	b.mu.Lock()
	delete(b.conns, dst)
	delete(b.conns, src)
	b.mu.Unlock()
}

// balancerDialTimeout bounds a Balancer's dial of one server, so that a
// server that does not answer costs a connection that long, not Close.
const balancerDialTimeout = 5 * time.Second
