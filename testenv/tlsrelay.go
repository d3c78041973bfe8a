package testenv

import (
	"bufio"
	"io"
	"net"
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
	r     *relay
	plain atomic.Int64
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
	tr := &TLSRelay{}
	r, err := newRelay(addrs[i], newGate(), tr.admit)
	if err != nil {
		t.Fatalf("testenv: TLS relay: %v", err)
	}
	tr.r = r
	t.Cleanup(func() { _ = r.close() })
	return tr
}

// Addr returns the relay's "host:port", to give clients instead of the
// server's.
func (tr *TLSRelay) Addr() string { return tr.r.l.Addr().String() }

// PlaintextBytes returns how many bytes clients sent on connections that
// did not open with a TLS handshake record.
func (tr *TLSRelay) PlaintextBytes() int64 { return tr.plain.Load() }

// admit forwards a connection that opens with TLS (its first byte read
// ahead and kept), and counts one that does not until the client stops.
func (tr *TLSRelay) admit(c net.Conn) (net.Conn, bool) {
	in := bufio.NewReader(c)
	first, err := in.Peek(1)
	if err != nil {
		return nil, false
	}
	if first[0] != tlsHandshakeRecord {
		_, _ = io.Copy(counter{&tr.plain}, in)
		return nil, false
	}
	return peekedConn{Conn: c, in: in}, true
}

// peekedConn is a connection whose first bytes were read ahead into in.
type peekedConn struct {
	net.Conn
	in *bufio.Reader
}

func (c peekedConn) Read(b []byte) (int, error) { return c.in.Read(b) }

// counter is an io.Writer that counts what it is given.
type counter struct{ n *atomic.Int64 }

func (w counter) Write(b []byte) (int, error) {
	w.n.Add(int64(len(b)))
	return len(b), nil
}
