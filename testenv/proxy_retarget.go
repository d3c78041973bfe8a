package testenv

import "fmt"

// Retarget sends the connections that listener i accepts from now on to
// addr ("host:port") instead of its server, and cuts every connection the
// proxy holds, as when the address behind a name or a reused IP moves to
// another server, perhaps of another ensemble. It fails with
// ErrBadOptions for an i out of range.
func (p *Proxy) Retarget(i int, addr string) error {
	p.mu.Lock()
	if i < 0 || i >= len(p.routes) {
		p.mu.Unlock()
		return fmt.Errorf("%w: listener %d of %d", ErrBadOptions, i, len(p.routes))
	}
	p.routes[i] = addr
	p.mu.Unlock()
	p.Cut()
	return nil
}

// route returns where listener i forwards now.
func (p *Proxy) route(i int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.routes[i]
}
