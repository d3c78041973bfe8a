package testenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	// fourLetterTimeout bounds a four-letter-word exchange until the
	// reply's first bytes, and each later read, when ctx allows longer,
	// so a paused server cannot stall a caller for long.
	fourLetterTimeout = 2 * time.Second

	// modeTimeout bounds each server's answer when QuorumLeader polls all
	// of them, so a paused server delays a poll by at most this much.
	modeTimeout = time.Second

	// pollInterval is how often readiness is re-checked while waiting.
	pollInterval = 50 * time.Millisecond
)

var fourLetter = regexp.MustCompile(`^[a-z]{4}$`)

// FourLetterWord sends a four-letter-word command ("ruok", "srvr", "mntr",
// "stat", "cons", "wchc", "wchp", "wchs", ...) to server i and returns its
// reply. Each exchange is bounded by ctx, and by 2 s until the reply's
// first bytes and 2 s between reads after them.
func (c *Cluster) FourLetterWord(ctx context.Context, i int, cmd string) (string, error) {
	s, err := c.server(i)
	if err != nil {
		return "", err
	}
	if !fourLetter.MatchString(cmd) {
		return "", fmt.Errorf("%w: four-letter word %q", ErrBadOptions, cmd)
	}
	reply, err := fourLetterWord(ctx, s.addr(), cmd)
	if err != nil {
		return "", fmt.Errorf("%s to server %d: %w", cmd, i, err)
	}
	return reply, nil
}

// fourLetterWord sends cmd to addr and reads the reply until the server
// closes the connection. Connecting, sending and the reply's first bytes
// are bounded by fourLetterTimeout; after that each read is, so that a
// long reply the server streams (the dump or wchc of a million znodes)
// is read whole. ctx bounds it all.
func fourLetterWord(ctx context.Context, addr, cmd string) (string, error) {
	first, cancel := context.WithTimeout(ctx, fourLetterTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(first, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	deadline, _ := first.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", err
	}
	var b strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := conn.Read(buf)
		b.Write(buf[:n])
		switch {
		case err == io.EOF:
			return b.String(), nil
		case err != nil:
			return "", err
		}
		if err := conn.SetReadDeadline(time.Now().Add(fourLetterTimeout)); err != nil {
			return "", err
		}
	}
}

// Mode returns server i's role from its "srvr" reply: "leader",
// "follower", "observer" or "standalone", or "" when it runs but does not
// serve (an ensemble member without a quorum). It returns an error when the
// server does not answer within ctx and 2 s.
func (c *Cluster) Mode(ctx context.Context, i int) (string, error) {
	reply, err := c.FourLetterWord(ctx, i, "srvr")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(reply) {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", nil
}

// modes asks every server for its mode concurrently; a server that does
// not answer gets "".
func (c *Cluster) modes(ctx context.Context) []string {
	modes := make([]string, len(c.servers))
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(ctx, modeTimeout)
	defer cancel()
	for i := range c.servers {
		wg.Go(func() { modes[i], _ = c.Mode(ctx, i) })
	}
	wg.Wait()
	return modes
}

// QuorumLeader returns the index of the server that reports itself as the
// ensemble's leader ("srvr" Mode: leader), or 0 for a standalone server.
// Servers are asked concurrently, each given 1 s to answer. It returns
// ErrNoQuorumLeader when none, or more than one, does.
func (c *Cluster) QuorumLeader(ctx context.Context) (int, error) {
	if _, err := c.server(0); err != nil {
		return -1, err
	}
	modes := c.modes(ctx)
	leader, found := -1, 0
	for i, m := range modes {
		if m == "leader" || m == "standalone" {
			leader, found = i, found+1
		}
	}
	if found != 1 {
		return -1, fmt.Errorf("%w: modes %q", ErrNoQuorumLeader, modes)
	}
	return leader, nil
}

// WaitQuorumLeader waits until a quorum leader exists whose index is not
// in except, and returns its index. It polls every 50 ms until ctx ends.
func (c *Cluster) WaitQuorumLeader(ctx context.Context, except ...int) (int, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		i, err := c.QuorumLeader(ctx)
		if err == nil && !slices.Contains(except, i) {
			return i, nil
		}
		if err == nil {
			err = fmt.Errorf("quorum leader is still server %d", i)
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("wait for a quorum leader other than %v: %w (last: %v)", except, ctx.Err(), err)
		case <-c.closed:
			return -1, ErrClosed
		case <-t.C:
		}
	}
}

// awaitServing waits until every server in ix serves clients and, when
// needLeader is set, one server of the cluster is the quorum leader. It
// fails early when one of them exits.
func (c *Cluster) awaitServing(ctx context.Context, ix []int, needLeader bool) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		err := c.checkServing(ctx, ix, needLeader)
		if err == nil {
			return nil
		}
		for _, i := range ix {
			if c.servers[i].logContains(bindFailure) {
				return fmt.Errorf("server %d: %w", i, errPortTaken)
			}
			if exit := c.servers[i].exitErr(); exit != nil {
				return exit
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for ZooKeeper to serve: %w (last: %v)", ctx.Err(), err)
		case <-c.closed:
			return ErrClosed
		case <-t.C:
		}
	}
}

// checkServing reports why the servers in ix are not all serving yet.
func (c *Cluster) checkServing(ctx context.Context, ix []int, needLeader bool) error {
	for _, i := range ix {
		m, err := c.Mode(ctx, i)
		if err != nil {
			return err
		}
		if m == "" {
			return fmt.Errorf("server %d does not serve yet", i)
		}
		if err := c.secureListening(ctx, i); err != nil {
			return err
		}
	}
	if needLeader {
		_, err := c.QuorumLeader(ctx)
		return err
	}
	return nil
}

// secureListening reports whether server i's secure client port accepts
// connections, when the cluster runs TLS: ZooKeeper opens it after the
// plain port answers four-letter words, so a server serving on the plain
// port may still refuse a TLS client for a moment.
func (c *Cluster) secureListening(ctx context.Context, i int) error {
	if c.tls == nil {
		return nil
	}
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", c.servers[i].secureAddr())
	if err != nil {
		return fmt.Errorf("server %d's secure port does not listen yet: %w", i, err)
	}
	return conn.Close()
}
