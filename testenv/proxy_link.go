package testenv

import (
	"net"
	"sync"
	"time"

	"github.com/zkelect/zkelect/internal/jute"
)

const (
	// proxyDialTimeout bounds the proxy's dial to a server.
	proxyDialTimeout = 5 * time.Second

	// replyQueue is how many server frames a link reads ahead of delivery,
	// so that latency applies from each frame's arrival.
	replyQueue = 64
)

// link is one client connection through the proxy and its connection to
// the server. Four goroutines serve it: a reader and a writer in each
// direction, so that latency delays each frame from its own arrival. While the gate is shut, frames and disconnects are
// held in both directions.
type link struct {
	p      *Proxy
	client net.Conn
	done   chan struct{}

	mu     sync.Mutex
	server net.Conn    // nil until dialled
	cut    *pendingCut // armed on this link by a matching request
	cutXid int32       // xid of that request
	closed bool
}

// reply is one frame (a server's reply or a client's request) and when it
// reached the proxy.
type reply struct {
	frame     []byte
	arrived   time.Time
	handshake bool
}

// acceptLoop accepts client connections for listener i until it is
// closed, each forwarded to the route the listener has when it arrives.
func (p *Proxy) acceptLoop(l net.Listener, i int) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		target := p.route(i)
		lk := &link{p: p, client: conn, done: make(chan struct{})}
		if !p.register(lk) {
			_ = conn.Close()
			return
		}
		p.wg.Go(func() { lk.run(target) })
	}
}

func (p *Proxy) register(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.links[l] = struct{}{}
	return true
}

// run connects to the server once the gate is open, starts the reply
// goroutines and forwards requests until either side closes.
func (l *link) run(target string) {
	defer l.close()
	if !l.p.gate.wait(l.done) {
		return
	}
	server, err := net.DialTimeout("tcp", target, proxyDialTimeout)
	if err != nil {
		return // the client sees its connection closed, as when refused
	}
	if !l.attach(server) {
		return
	}
	replies := make(chan reply, replyQueue)
	l.p.wg.Go(func() { l.readReplies(server, replies) })
	l.p.wg.Go(func() { l.writeReplies(replies) })
	l.forwardRequests(server, target)
}

// attach records the server connection unless the link was closed.
func (l *link) attach(server net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = server.Close()
		return false
	}
	l.server = server
	return true
}

// forwardRequests copies frames from the client to target, each after the
// request latency from its arrival, arming a pending CutAfterRequest on the
// first request whose op matches, and dropping requests while target plays
// dead (ForwardOnlyPings). Frames the client sent before it closed its
// connection still reach the server, as on a real network.
func (l *link) forwardRequests(server net.Conn, target string) {
	requests := make(chan reply, replyQueue)
	l.p.wg.Go(func() { l.readRequests(requests) })
	handshake := true
	for r := range requests {
		if !handshake {
			if l.p.dropsRequest(target, r.frame) {
				continue
			}
			l.armCut(r.frame)
		}
		handshake = false
		if !l.sleepUntil(r.arrived.Add(l.p.currentRequestLatency())) || !l.p.gate.wait(l.done) {
			return
		}
		if _, err := server.Write(r.frame); err != nil {
			break
		}
	}
	l.p.gate.wait(l.done) // a partition hides the disconnect too
}

// readRequests reads client frames into out until the client connection
// fails. While the gate is shut it starts no read (one under way when it
// shut takes its frame), as a partitioned peer acknowledges nothing: the
// client's socket buffers fill and its writes block, as they would on a
// real network, instead of vanishing into the proxy's queue.
func (l *link) readRequests(out chan<- reply) {
	defer close(out)
	for {
		if !l.p.gate.wait(l.done) {
			return
		}
		frame, err := readFrame(l.client)
		if err != nil {
			return
		}
		select {
		case out <- reply{frame: frame, arrived: time.Now()}:
		case <-l.done:
			return
		}
	}
}

// readReplies reads server frames into out, recording the session granted
// by the handshake, until the server connection fails.
func (l *link) readReplies(server net.Conn, out chan<- reply) {
	defer close(out)
	handshake := true
	for {
		frame, err := readFrame(server)
		if err != nil {
			return
		}
		if handshake {
			if r, ok := jute.DecodeConnectResponse(frame[4:]); ok {
				l.p.recordSession(r)
			}
		}
		select {
		case out <- reply{frame: frame, arrived: time.Now(), handshake: handshake}:
		case <-l.done:
			return
		}
		handshake = false
	}
}

// writeReplies delivers server frames to the client after the latency, or
// drops the reply an armed cut waits for and closes the link.
func (l *link) writeReplies(in <-chan reply) {
	defer l.close()
	for r := range in {
		if !r.handshake {
			if cut := l.matchCut(r.frame); cut != nil {
				l.close()
				close(cut.fired)
				return
			}
		}
		if !l.sleepUntil(r.arrived.Add(l.p.currentLatency())) || !l.p.gate.wait(l.done) {
			return
		}
		if _, err := l.client.Write(r.frame); err != nil {
			return
		}
	}
	l.p.gate.wait(l.done) // a partition hides the disconnect too
}

func (l *link) armCut(frame []byte) {
	xid, op, ok := requestHeader(frame)
	if !ok {
		return
	}
	if cut := l.p.takeCut(op); cut != nil {
		l.mu.Lock()
		l.cut, l.cutXid = cut, xid
		l.mu.Unlock()
	}
}

// matchCut returns the armed cut when frame is the reply it waits for.
func (l *link) matchCut(frame []byte) *pendingCut {
	xid, ok := replyXid(frame)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ok || l.cut == nil || xid != l.cutXid {
		return nil
	}
	cut := l.cut
	l.cut = nil
	return cut
}

// sleepUntil waits until t; false when the link closed first.
func (l *link) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-l.done:
		return false
	}
}

// close closes both connections and forgets the link. Idempotent.
func (l *link) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	server := l.server
	l.mu.Unlock()
	close(l.done)
	_ = l.client.Close()
	if server != nil {
		_ = server.Close()
	}
	l.p.mu.Lock()
	delete(l.p.links, l)
	l.p.mu.Unlock()
}
