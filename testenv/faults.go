package testenv

import (
	"context"
	"errors"
	"fmt"
)

// server returns server i, or ErrBadIndex / ErrClosed.
func (c *Cluster) server(i int) (*server, error) {
	select {
	case <-c.closed:
		return nil, ErrClosed
	default:
	}
	if i < 0 || i >= len(c.servers) {
		return nil, fmt.Errorf("%w: %d, cluster has %d", ErrBadIndex, i, len(c.servers))
	}
	return c.servers[i], nil
}

// Kill sends SIGKILL to server i's process group and waits for the process
// to exit: a crash, with no goodbye to clients or peers. It returns
// ErrNotRunning when the server is not running.
func (c *Cluster) Kill(i int) error {
	s, err := c.server(i)
	if err != nil {
		return err
	}
	if err := s.kill(); err != nil {
		return fmt.Errorf("kill server %d: %w", i, err)
	}
	c.opts.Logf("testenv: killed server %d (SIGKILL)", i)
	return nil
}

// Stop asks server i to shut down (SIGTERM, plus SIGCONT should it be
// paused) and waits for it to exit, sending SIGKILL after 10 s. It returns
// ErrNotRunning when the server is not running.
func (c *Cluster) Stop(i int) error {
	s, err := c.server(i)
	if err != nil {
		return err
	}
	if err := s.stop(); err != nil {
		return fmt.Errorf("stop server %d: %w", i, err)
	}
	c.opts.Logf("testenv: stopped server %d (SIGTERM)", i)
	return nil
}

// Restart starts server i again with the same data directory and port,
// first stopping it (as Stop does) if it is still running, and waits until
// it serves clients (in an ensemble: until it has joined a quorum as leader
// or follower) or ctx ends.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	s, err := c.server(i)
	if err != nil {
		return err
	}
	if err := s.stop(); err != nil && !errors.Is(err, ErrNotRunning) {
		return fmt.Errorf("restart server %d: %w", i, err)
	}
	if err := s.start(c.inst); err != nil {
		return fmt.Errorf("restart server %d: %w", i, err)
	}
	if err := c.awaitServing(ctx, []int{i}, false); err != nil {
		return fmt.Errorf("restart server %d: %w\n%s", i, err, s.logTail(15))
	}
	c.opts.Logf("testenv: restarted server %d (pid %d)", i, s.pid())
	return nil
}

// Pause freezes server i's process group with SIGSTOP: its sockets stay
// open but it answers nothing, like a long GC pause or a hung VM. On Linux
// it returns once the process is stopped. It returns ErrNotRunning when the
// server is not running.
func (c *Cluster) Pause(i int) error {
	s, err := c.server(i)
	if err != nil {
		return err
	}
	if err := s.setPaused(true); err != nil {
		return fmt.Errorf("pause server %d: %w", i, err)
	}
	c.opts.Logf("testenv: paused server %d (SIGSTOP)", i)
	return nil
}

// Resume continues a paused server i with SIGCONT. It returns ErrNotRunning
// when the server is not running.
func (c *Cluster) Resume(i int) error {
	s, err := c.server(i)
	if err != nil {
		return err
	}
	if err := s.setPaused(false); err != nil {
		return fmt.Errorf("resume server %d: %w", i, err)
	}
	c.opts.Logf("testenv: resumed server %d (SIGCONT)", i)
	return nil
}

// SilenceQuorum silences server i's links to the other servers' quorum
// ports (in an ensemble started with Options.QuorumRelays): bytes and
// disconnects are held both ways and the sockets stay open, as in a
// network partition between a follower and its quorum leader. The server
// keeps answering its clients from what it has; it gives up the link only
// after syncLimit ticks without a word from the leader, while the leader
// expires the sessions of its clients after their timeout. HealQuorum
// undoes it. It returns ErrBadOptions without Options.QuorumRelays.
func (c *Cluster) SilenceQuorum(i int) error {
	g, err := c.quorumGate(i)
	if err != nil {
		return err
	}
	g.shut()
	c.opts.Logf("testenv: silenced server %d's quorum links", i)
	return nil
}

// HealQuorum undoes SilenceQuorum for server i: held bytes are delivered
// and forwarding resumes.
func (c *Cluster) HealQuorum(i int) error {
	g, err := c.quorumGate(i)
	if err != nil {
		return err
	}
	g.reopen()
	c.opts.Logf("testenv: healed server %d's quorum links", i)
	return nil
}

// quorumGate returns the gate of server i's quorum links.
func (c *Cluster) quorumGate(i int) (*gate, error) {
	if _, err := c.server(i); err != nil {
		return nil, err
	}
	if c.relays == nil {
		return nil, fmt.Errorf("%w: quorum links of server %d: the cluster was started without QuorumRelays (or has one server)", ErrBadOptions, i)
	}
	return c.relays.gates[i], nil
}
