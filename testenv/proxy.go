package testenv

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// Proxy is a TCP proxy between one ZooKeeper client and the servers, one
// listener per server, that injects network faults into that client's
// traffic only: cut every connection, stall it (a blackhole), delay the
// server's replies or the client's requests, or let one request of a given operation reach the
// server and cut the connection before its reply reaches the client.
//
// It parses ZooKeeper's length-prefixed frames, which is why it is written
// here rather than built on toxiproxy: toxiproxy's toxics see a byte stream
// and cannot tell where a request or its reply starts, so they cannot cut
// after a given operation, nor read the session credentials the proxy
// records from the handshake (Sessions).
//
// Give the client ConnectString instead of the cluster's. Methods are safe
// for concurrent use. Close stops it.
type Proxy struct {
	targets   []string // as given: the routes of Dialer
	listeners []net.Listener
	gate      *gate
	done      chan struct{}
	wg        sync.WaitGroup // accept loops and every link's goroutines

	mu       sync.Mutex
	links    map[*link]struct{}
	routes   []string        // where listener i forwards now (Retarget)
	latency  time.Duration   // server to client
	reqDelay time.Duration   // client to server
	cut      *pendingCut     // armed by CutAfterRequest, taken by the next matching request
	zombies  map[string]bool // targets set by ForwardOnlyPings
	sessions []SessionCredentials
	closed   bool
}

// SessionCredentials identify a ZooKeeper session: enough to resume it, or
// to expire it with ExpireSession.
type SessionCredentials struct {
	// ID is the session id the server assigned.
	ID int64
	// Password is the session password the server assigned.
	Password []byte
	// Timeout is the negotiated session timeout.
	Timeout time.Duration
}

// pendingCut is one CutAfterRequest: op to match, fired closed once cut.
type pendingCut struct {
	op    int32
	fired chan struct{}
}

// NewProxy starts a proxy with one loopback listener per server of c.
// The caller must Close it.
func (c *Cluster) NewProxy() (*Proxy, error) {
	if _, err := c.server(0); err != nil {
		return nil, err
	}
	return ListenProxy(c.Addrs())
}

// NewProxyT is NewProxy for a test: it calls t.Fatal on error and closes
// the proxy in t.Cleanup.
func (c *Cluster) NewProxyT(t testing.TB) *Proxy {
	t.Helper()
	p, err := c.NewProxy()
	if err != nil {
		t.Fatalf("testenv: new proxy: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// ListenProxy starts a proxy with one loopback listener per target address
// ("host:port" of a ZooKeeper server). The caller must Close it.
func ListenProxy(targets []string) (*Proxy, error) {
	listen := make([]string, len(targets))
	for i := range listen {
		listen[i] = "127.0.0.1:0"
	}
	return ListenProxyAt(listen, targets)
}

// ListenProxyAt is ListenProxy with listener i on listen[i] ("ip:port",
// port 0 for any): another loopback address (127.0.0.2, ...) to stand for
// a server that moved behind its name. It fails when the lengths differ or
// an address cannot be listened on.
func ListenProxyAt(listen, targets []string) (*Proxy, error) {
	if len(targets) == 0 || len(listen) != len(targets) {
		return nil, fmt.Errorf("%w: proxy needs at least one target and one listen address per target", ErrBadOptions)
	}
	p := &Proxy{
		targets: append([]string(nil), targets...),
		routes:  append([]string(nil), targets...),
		gate:    newGate(),
		done:    make(chan struct{}),
		links:   make(map[*link]struct{}),
	}
	for _, a := range listen {
		l, err := net.Listen("tcp", a)
		if err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("proxy listen: %w", err)
		}
		p.listeners = append(p.listeners, l)
	}
	for i, l := range p.listeners {
		p.wg.Go(func() { p.acceptLoop(l, i) })
	}
	return p, nil
}

// ConnectString returns the proxy's listener addresses, comma-separated, in
// the cluster's server order: give it to the client instead of the
// cluster's.
func (p *Proxy) ConnectString() string { return strings.Join(p.Addrs(), ",") }

// Addrs returns the proxy's listener addresses; Addrs()[i] forwards to the
// cluster's server i.
func (p *Proxy) Addrs() []string {
	addrs := make([]string, len(p.listeners))
	for i, l := range p.listeners {
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// Dialer returns a go-zookeeper dialer that routes through the proxy: a
// dial to a target address (the cluster's server i) connects to the proxy's
// listener i instead; any other address is dialled directly. Use it with
// zk.WithDialer when a client must keep the cluster's connect string.
func (p *Proxy) Dialer() zk.Dialer {
	route := make(map[string]string, len(p.targets))
	for i, target := range p.targets {
		route[target] = p.listeners[i].Addr().String()
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		if via, ok := route[address]; ok {
			address = via
		}
		return net.DialTimeout(network, address, timeout)
	}
}

// Cut closes every connection through the proxy now, both ways: the client
// sees connection loss, the server a disconnect; the session survives if
// the client reconnects within its timeout. New connections are accepted.
func (p *Proxy) Cut() {
	for _, l := range p.snapshotLinks() {
		l.close()
	}
}

// Blackhole stops forwarding in both directions while keeping every socket
// open, like a network partition: frames (and disconnects) are held, not
// dropped, and new connections are accepted but not forwarded. The proxy
// stops reading what clients send, so a client's writes block once its
// socket buffers fill (the servers' replies are still read ahead, up to 64
// frames a connection). Held past the session timeout, the server expires
// the session. Heal resumes.
func (p *Proxy) Blackhole() { p.gate.shut() }

// SetLatency delays each server-to-client frame by d from its arrival at
// the proxy (order is kept). Zero removes the delay. A connection reads at
// most 64 frames ahead of delivery, so it also caps the replies at about
// 64 per d: a slow server's throughput as well as a long link's latency
// (the test of a cold start on a slow server relies on that).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = max(d, 0)
}

// SetRequestLatency delays each client-to-server frame by d from its
// arrival at the proxy (order is kept), the handshake included. With
// SetLatency it makes a slow link both ways. Zero removes the delay.
func (p *Proxy) SetRequestLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqDelay = max(d, 0)
}

// Heal undoes Blackhole, SetLatency, SetRequestLatency and ForwardOnlyPings and disarms a
// pending CutAfterRequest: held frames are delivered and forwarding
// resumes (requests ForwardOnlyPings dropped stay unanswered).
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.latency, p.reqDelay = 0, 0
	p.cut = nil
	p.zombies = nil
	p.mu.Unlock()
	p.gate.reopen()
}

// CutAfterRequest arms a one-shot fault: the next request with ZooKeeper
// op code op (OpCreate, OpDelete, OpCreate2, OpMulti, ...) on any
// connection reaches the server; when its reply arrives, proving the server
// applied it, the reply is dropped and that connection is cut, so the
// client sees connection loss for a request that succeeded. The returned
// channel is closed when the cut happened. A later call replaces an unfired
// one.
func (p *Proxy) CutAfterRequest(op int32) <-chan struct{} {
	c := &pendingCut{op: op, fired: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = c
	return c.fired
}

// Sessions returns the sessions the servers granted through this proxy, in
// handshake order (a reconnect that resumes a session is listed again).
func (p *Proxy) Sessions() []SessionCredentials {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]SessionCredentials(nil), p.sessions...)
}

// Close stops the listeners, closes every connection and waits for the
// proxy's goroutines to end. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	p.mu.Unlock()
	var errs []error
	for _, l := range p.listeners {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.Cut()
	p.wg.Wait()
	return errors.Join(errs...)
}

func (p *Proxy) snapshotLinks() []*link {
	p.mu.Lock()
	defer p.mu.Unlock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	return links
}

func (p *Proxy) currentLatency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency
}

func (p *Proxy) currentRequestLatency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqDelay
}

// takeCut returns and disarms the pending cut if it matches op.
func (p *Proxy) takeCut(op int32) *pendingCut {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cut
	if c == nil || c.op != op {
		return nil
	}
	p.cut = nil
	return c
}

func (p *Proxy) recordSession(r jute.ConnectResponse) {
	if r.Timeout <= 0 || r.SessionID == 0 {
		return // the server refused to resume an expired session
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions = append(p.sessions, SessionCredentials{
		ID:       r.SessionID,
		Password: r.Password,
		Timeout:  r.Timeout,
	})
}
