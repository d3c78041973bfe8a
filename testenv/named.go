package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// NamedServers puts each server of a cluster behind a name of a private
// hosts file (WithPrivateHosts), "zk-<i>.test", reached through a proxy
// listening on a loopback address of its own: the servers of a
// StatefulSet behind a headless Service, whose pods come back on new
// addresses. Move restarts a server on a new address, as a rolling
// restart does. Methods are safe for concurrent use; Close stops the
// proxies.
type NamedServers struct {
	c *Cluster
	h *Hosts

	mu      sync.Mutex
	proxies []*Proxy
	ports   []string
	gone    []*Proxy // at the addresses servers left, blackholed
}

// NameServers names every server of c in h, server i at ips[i] (a
// loopback address: 127.0.0.2, ...). The caller must Close it.
func NameServers(c *Cluster, h *Hosts, ips []string) (*NamedServers, error) {
	if len(ips) != c.Size() {
		return nil, fmt.Errorf("%w: %d addresses for %d servers", ErrBadOptions, len(ips), c.Size())
	}
	n := &NamedServers{c: c, h: h}
	for i, ip := range ips {
		p, err := ListenProxyAt([]string{net.JoinHostPort(ip, "0")}, []string{c.Addrs()[i]})
		if err != nil {
			_ = n.Close()
			return nil, err
		}
		_, port, _ := net.SplitHostPort(p.Addrs()[0])
		n.proxies, n.ports = append(n.proxies, p), append(n.ports, port)
		if err := h.Set(n.name(i), ip); err != nil {
			_ = n.Close()
			return nil, err
		}
	}
	return n, nil
}

func (n *NamedServers) name(i int) string { return fmt.Sprintf("zk-%d.test", i) }

// Servers returns the servers' names with their ports ("zk-0.test:port"),
// in the cluster's order: the client's server list.
func (n *NamedServers) Servers() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.ports))
	for i, port := range n.ports {
		out[i] = net.JoinHostPort(n.name(i), port)
	}
	return out
}

// Move restarts server i on ip, as a StatefulSet's pod comes back on a
// new address: it stops the server (SIGTERM), blackholes its proxy (the
// old address drops what it is sent, as a deleted pod's does: no refusal),
// listens at ip on the same port, points the server's name at ip and
// starts the server again, waiting until it serves.
func (n *NamedServers) Move(ctx context.Context, i int, ip string) error {
	if err := n.MoveStart(i, ip); err != nil {
		return err
	}
	return n.AwaitServing(ctx, i)
}

// AwaitServing waits until server i serves clients.
func (n *NamedServers) AwaitServing(ctx context.Context, i int) error {
	if err := n.c.awaitServing(ctx, []int{i}, false); err != nil {
		return fmt.Errorf("server %d: %w", i, err)
	}
	return nil
}

// MoveStart is Move without waiting for the server to serve: it returns
// once the server's process started on ip, as a StatefulSet goes on to
// the next pod once a probe that does not check the quorum (ZooKeeper's
// ruok) answers. Wait for it with AwaitServing.
func (n *NamedServers) MoveStart(i int, ip string) error {
	if err := n.c.Stop(i); err != nil && !errors.Is(err, ErrNotRunning) {
		return err
	}
	n.mu.Lock()
	if i < 0 || i >= len(n.proxies) {
		n.mu.Unlock()
		return fmt.Errorf("%w: server %d of %d", ErrBadIndex, i, len(n.proxies))
	}
	old, port := n.proxies[i], n.ports[i]
	n.gone = append(n.gone, old)
	n.mu.Unlock()
	old.Cut()
	old.Blackhole()
	p, err := ListenProxyAt([]string{net.JoinHostPort(ip, port)}, []string{n.c.Addrs()[i]})
	if err != nil {
		return fmt.Errorf("move server %d to %s: %w", i, ip, err)
	}
	n.mu.Lock()
	n.proxies[i] = p
	n.mu.Unlock()
	if err := n.h.Set(n.name(i), ip); err != nil {
		return err
	}
	n.c.opts.Logf("testenv: server %d moved to %s:%s", i, ip, port)
	s, err := n.c.server(i)
	if err != nil {
		return err
	}
	if err := s.start(n.c.inst); err != nil {
		return fmt.Errorf("move server %d to %s: start: %w", i, ip, err)
	}
	return nil
}

// Close stops the proxies.
func (n *NamedServers) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for _, p := range append(n.proxies, n.gone...) {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
