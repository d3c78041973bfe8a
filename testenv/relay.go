package testenv

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// A quorum relay carries one server's links to the other servers' quorum
// ports (a follower's link to the quorum leader, over which it forwards
// writes and syncs and reports its clients' sessions) byte for byte, so a
// test can silence that link alone (Cluster.SilenceQuorum) while the
// server keeps answering its clients: the follower then notices the loss
// only after syncLimit ticks, while the quorum leader expires the sessions
// of the follower's clients after their timeout. Leader election traffic
// (the election ports) never goes through a relay.

// relayDialTimeout bounds a relay's dial to its target.
const relayDialTimeout = 5 * time.Second

// relay forwards every connection accepted on its loopback listener to
// target, through a gate: shut, it holds bytes and disconnects in both
// directions and keeps every socket open, like a silent network.
type relay struct {
	l      net.Listener
	target string
	gate   *gate
	// admit, when set, sees each accepted connection first and returns
	// the one to forward, or false to close it unforwarded (TLSRelay).
	admit func(net.Conn) (net.Conn, bool)
	done  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// newRelay listens on a free loopback port for target; admit may be nil.
func newRelay(target string, g *gate, admit func(net.Conn) (net.Conn, bool)) (*relay, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay listen: %w", err)
	}
	r := &relay{l: l, target: target, gate: g, admit: admit, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	r.wg.Go(r.accept)
	return r, nil
}

// port returns the listener's port.
func (r *relay) port() int { return r.l.Addr().(*net.TCPAddr).Port }

func (r *relay) accept() {
	for {
		c, err := r.l.Accept()
		if err != nil {
			return
		}
		r.wg.Go(func() { r.serve(c) })
	}
}

// serve connects c to the target once the gate is open and copies both
// ways until either side closes.
func (r *relay) serve(c net.Conn) {
	if !r.track(c) {
		return
	}
	defer r.untrack(c)
	if r.admit != nil {
		var ok bool
		if c, ok = r.admit(c); !ok {
			return
		}
	}
	if !r.gate.wait(r.done) {
		return
	}
	s, err := net.DialTimeout("tcp", r.target, relayDialTimeout)
	if err != nil {
		return
	}
	if !r.track(s) {
		return
	}
	defer r.untrack(s)
	var both sync.WaitGroup
	both.Go(func() { r.copy(s, c) })
	both.Go(func() { r.copy(c, s) })
	both.Wait()
}

// copy forwards src to dst, each chunk once the gate is open; at the end
// (a disconnect, also held by a shut gate) it closes both.
func (r *relay) copy(dst, src net.Conn) {
	defer func() {
		_ = dst.Close()
		_ = src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !r.gate.wait(r.done) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			r.gate.wait(r.done)
			return
		}
	}
}

// track records c for close; false (and c closed) after close.
func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *relay) untrack(c net.Conn) {
	_ = c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// close stops the listener, closes every connection and waits for the
// relay's goroutines. Idempotent.
func (r *relay) close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.done)
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	err := r.l.Close()
	r.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// quorumRelays are the relays of every server's links to the others'
// quorum ports: links[i][j] carries server i's link to server j.
type quorumRelays struct {
	links [][]*relay
	gates []*gate // gates[i] silences every link of server i
}

// newQuorumRelays starts a relay for each ordered pair of servers.
func newQuorumRelays(servers []*server) (*quorumRelays, error) {
	q := &quorumRelays{links: make([][]*relay, len(servers))}
	for i := range servers {
		q.gates = append(q.gates, newGate())
		q.links[i] = make([]*relay, len(servers))
		for j, to := range servers {
			if i == j {
				continue
			}
			r, err := newRelay(fmt.Sprintf("127.0.0.1:%d", to.quorumPort), q.gates[i], nil)
			if err != nil {
				_ = q.close()
				return nil, err
			}
			q.links[i][j] = r
		}
	}
	return q, nil
}

// port returns the port server i dials for server j's quorum port.
func (q *quorumRelays) port(i, j int) int { return q.links[i][j].port() }

// close stops every relay.
func (q *quorumRelays) close() error {
	var errs []error
	for _, row := range q.links {
		for _, r := range row {
			if r != nil {
				errs = append(errs, r.close())
			}
		}
	}
	return errors.Join(errs...)
}
