package testenv

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// tlsHandshakeRecord is the first byte of every TLS connection: a
// handshake record (RFC 8446, section 5.1, ContentType handshake(22)).
const tlsHandshakeRecord = 0x16

// TLSRelay stands between clients and one server's secure client port
// (Cluster.SecureAddrs) and forwards every connection that opens with a
// TLS handshake record, byte for byte. A connection that opens with
// anything else (a client speaking ZooKeeper's protocol in clear, as a
// plain TCP connect request would) is not forwarded: its bytes are counted
// (PlaintextBytes) and it is closed once the client stops sending.
type TLSRelay struct {
	l      net.Listener
	target string
	plain  atomic.Int64
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// NewTLSRelayT starts a TLSRelay on a free loopback port for server i's
// secure client port; it calls t.Fatal on error and closes the relay in
// t.Cleanup.
func (c *Cluster) NewTLSRelayT(t testing.TB, i int) *TLSRelay {
	t.Helper()
	addrs := c.SecureAddrs()
	if i < 0 || i >= len(addrs) {
		t.Fatalf("testenv: TLS relay for server %d: the cluster has %d secure client ports", i, len(addrs))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: TLS relay listen: %v", err)
	}
	r := &TLSRelay{l: l, target: addrs[i], conns: map[net.Conn]struct{}{}}
	r.wg.Go(r.accept)
	t.Cleanup(r.Close)
	return r
}

// Addr returns the relay's "host:port", to give clients instead of the
// server's.
func (r *TLSRelay) Addr() string { return r.l.Addr().String() }

// PlaintextBytes returns how many bytes clients sent on connections that
// did not open with a TLS handshake record.
func (r *TLSRelay) PlaintextBytes() int64 { return r.plain.Load() }

func (r *TLSRelay) accept() {
	for {
		c, err := r.l.Accept()
		if err != nil {
			return
		}
		r.wg.Go(func() { r.serve(c) })
	}
}

// serve looks at c's first byte: TLS is forwarded to the target, anything
// else counted.
func (r *TLSRelay) serve(c net.Conn) {
	if !r.track(c) {
		return
	}
	defer r.untrack(c)
	in := bufio.NewReader(c)
	first, err := in.Peek(1)
	if err != nil {
		return
	}
	if first[0] != tlsHandshakeRecord {
		_, _ = io.Copy(counter{&r.plain}, in)
		return
	}
	s, err := net.DialTimeout("tcp", r.target, relayDialTimeout)
	if err != nil || !r.track(s) {
		return
	}
	defer r.untrack(s)
	var both sync.WaitGroup
	both.Go(func() { _, _ = io.Copy(s, in); _ = s.Close() })
	both.Go(func() { _, _ = io.Copy(c, s); _ = c.Close() })
	both.Wait()
}

// counter is an io.Writer that counts what it is given.
type counter struct{ n *atomic.Int64 }

func (w counter) Write(b []byte) (int, error) {
	w.n.Add(int64(len(b)))
	return len(b), nil
}

// track records c for Close; false (and c closed) after Close.
func (r *TLSRelay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *TLSRelay) untrack(c net.Conn) {
	_ = c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// Close stops the listener, closes every connection and waits for the
// relay's goroutines. Idempotent.
func (r *TLSRelay) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	_ = r.l.Close()
	r.wg.Wait()
}

// String names the relay and its target, for logs.
func (r *TLSRelay) String() string { return fmt.Sprintf("TLS relay %s -> %s", r.Addr(), r.target) }
