package testenv

import "fmt"

// xidPing is the xid of a ping request and of its reply.
const xidPing = -2

// ForwardOnlyPings makes server i (the cluster's server order, as Addrs)
// a zombie for the proxy's client: on every connection to it, open or
// new, the handshake and pings (xid -2) are forwarded and answered as
// before, but every other request is dropped. The connection stays alive
// and the session too, while no request is ever answered, as with a
// server whose request pipeline has stopped but whose connection threads
// still run. Heal ends it; requests dropped meanwhile stay unanswered.
// Errors wrap ErrBadOptions when i is out of range.
func (p *Proxy) ForwardOnlyPings(i int) error {
	if i < 0 || i >= len(p.targets) {
		return fmt.Errorf("%w: server %d of %d", ErrBadOptions, i, len(p.targets))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.zombies == nil {
		p.zombies = map[string]bool{}
	}
	p.zombies[p.targets[i]] = true
	return nil
}

// dropsRequest reports whether a request frame (not the handshake) to
// target must be dropped: target plays dead and frame is not a ping.
func (p *Proxy) dropsRequest(target string, frame []byte) bool {
	xid, _, ok := requestHeader(frame)
	if ok && xid == xidPing {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.zombies[target]
}
