package testenv

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// superUser is the digest user of a DynamicConfig cluster allowed to
// reconfigure it (ZooKeeper's DigestAuthenticationProvider.superDigest).
const superUser = "super"

// reconfigTimeout bounds one reconfig request when ctx allows longer.
const reconfigTimeout = 30 * time.Second

// makeSuperuser picks the superuser's password and adds its digest to
// every server's flags, with Options.DynamicConfig.
func (c *Cluster) makeSuperuser() error {
	if !c.opts.DynamicConfig {
		return nil
	}
	pw, err := randomHex(12)
	if err != nil {
		return err
	}
	c.super = pw
	sum := sha1.Sum([]byte(superUser + ":" + pw))
	props := maps.Clone(c.opts.SystemProperties)
	if props == nil {
		props = map[string]string{}
	}
	c.opts.SystemProperties = props
	c.opts.SystemProperties["zookeeper.DigestAuthenticationProvider.superDigest"] =
		superUser + ":" + base64.StdEncoding.EncodeToString(sum[:])
	return nil
}

// memberLine is s's line of a dynamic configuration: ZooKeeper's
// server.<id>=<host>:<quorum port>:<election port>:participant;<client address>.
func (s *server) memberLine() string {
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d:participant;127.0.0.1:%d", s.id(), s.quorumPort, s.electionPort, s.clientPort)
}

// writeDynamicConfig writes s's dynamic configuration file (the members
// peers) and myid, and names the file in zoo.cfg through line.
func writeDynamicConfig(s *server, peers []*server, line func(k string, v any)) error {
	line("reconfigEnabled", "true")
	line("standaloneEnabled", "false")
	path := filepath.Join(s.dir, "zoo.cfg.dynamic")
	line("dynamicConfigFile", path)
	var b strings.Builder
	for _, p := range peers {
		b.WriteString(p.memberLine() + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write dynamic configuration: %w", err)
	}
	myid := []byte(strconv.Itoa(s.id()) + "\n")
	if err := os.WriteFile(filepath.Join(s.dataDir(), "myid"), myid, 0o644); err != nil {
		return fmt.Errorf("write myid: %w", err)
	}
	return nil
}

// Members returns the indices of the ensemble's members, as Start and
// Reconfig and Join left them (nil without Options.DynamicConfig).
func (c *Cluster) Members() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.opts.DynamicConfig {
		return nil
	}
	return slices.Clone(c.members)
}

// Reconfig changes the members of a DynamicConfig cluster with one
// incremental reconfig request (ZooKeeper's reconfig -add/-remove), as
// its superuser, through any member still serving: the servers of index
// joining join as participants on their own ports, those of index leaving
// leave. The servers keep running (stop a removed one with Stop or Kill).
// It returns ErrBadIndex for an index out of range, ErrBadOptions without
// DynamicConfig, or the server's refusal (NEWCONFIGNOQUORUM when a joining server has not synced, ...).
func (c *Cluster) Reconfig(ctx context.Context, joining, leaving []int) error {
	if !c.opts.DynamicConfig {
		return fmt.Errorf("%w: Reconfig needs Options.DynamicConfig", ErrBadOptions)
	}
	var add, remove []string
	for _, i := range joining {
		s, err := c.server(i)
		if err != nil {
			return err
		}
		add = append(add, s.memberLine())
	}
	for _, i := range leaving {
		s, err := c.server(i)
		if err != nil {
			return err
		}
		remove = append(remove, strconv.Itoa(s.id()))
	}
	if err := c.reconfig(ctx, add, remove); err != nil && !c.reconfiguredAnyway(ctx, err, add, remove) {
		return fmt.Errorf("reconfig (join %v, leave %v): %w", joining, leaving, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.members = slices.DeleteFunc(c.members, func(m int) bool { return slices.Contains(leaving, m) })
	for _, i := range joining {
		if !slices.Contains(c.members, i) {
			c.members = append(c.members, i)
		}
	}
	slices.Sort(c.members)
	c.opts.Logf("testenv: reconfigured: members %v", c.members)
	return nil
}

// reconfig sends one incremental reconfig request through the members.
func (c *Cluster) reconfig(ctx context.Context, add, remove []string) error {
	ctx, cancel := context.WithTimeout(ctx, reconfigTimeout)
	defer cancel()
	var addrs []string
	for _, i := range c.Members() {
		addrs = append(addrs, c.servers[i].addr())
	}
	conn, err := openSession(ctx, addrs)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.AddAuth("digest", []byte(superUser+":"+c.super)); err != nil {
		return fmt.Errorf("authenticate as the superuser: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.IncrementalReconfig(add, remove, -1)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		conn.Close()
		<-done
		return ctx.Err()
	}
}

// reconfigured reports whether /zookeeper/config, read through the
// servers at addrs, has every line of add and no server of id in remove:
// a reconfig whose answer was lost (the quorum leader changed under it)
// may have been applied.
func reconfigured(ctx context.Context, addrs, add, remove []string) bool {
	conn, err := openSession(ctx, addrs)
	if err != nil {
		return false
	}
	defer conn.Close()
	data, _, err := conn.Get("/zookeeper/config")
	if err != nil {
		return false
	}
	for _, a := range add {
		if !strings.Contains(string(data), a) {
			return false
		}
	}
	for _, id := range remove {
		if strings.Contains(string(data), "server."+id+"=") {
			return false
		}
	}
	return true
}

// Join starts spare server i (Options.SpareServers) with the current
// members and itself in its configuration, adds it to the ensemble
// (Reconfig) and waits until it serves. It returns ErrBadIndex when i is
// not a spare that never joined.
func (c *Cluster) Join(ctx context.Context, i int) error {
	s, err := c.server(i)
	if err != nil {
		return err
	}
	members := c.Members()
	if i < c.opts.Servers || slices.Contains(members, i) {
		return fmt.Errorf("%w: server %d is not a spare that never joined", ErrBadIndex, i)
	}
	peers := []*server{}
	for _, m := range members {
		peers = append(peers, c.servers[m])
	}
	peers = append(peers, s)
	if err := writeConfig(s, peers, c.opts, func(_, to *server) int { return to.quorumPort }); err != nil {
		return fmt.Errorf("configure server %d: %w", i, err)
	}
	if err := s.start(c.inst); err != nil {
		return err
	}
	if err := c.joinWhenSynced(ctx, i); err != nil {
		return err
	}
	if err := c.awaitServing(ctx, []int{i}, false); err != nil {
		return errors.Join(fmt.Errorf("server %d joined but does not serve", i), err)
	}
	c.opts.Logf("testenv: server %d joined at %s", i, s.addr())
	return nil
}

// newConfigNoQuorum is how go-zookeeper v1.0.4 reports ZooKeeper's
// NEWCONFIGNOQUORUM (-13), for which it has no error of its own.
const newConfigNoQuorum = "unknown error: -13"

// joinWhenSynced adds server i, again while the ensemble answers that the
// new configuration has no quorum (i has not synced with the quorum
// leader yet).
func (c *Cluster) joinWhenSynced(ctx context.Context, i int) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		err := c.Reconfig(ctx, []int{i}, nil)
		if err == nil || !strings.Contains(err.Error(), newConfigNoQuorum) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-t.C:
		}
	}
}

// reconfiguredAnyway reports whether a reconfig that failed with a lost
// connection was applied all the same, as read back through every server
// that remains (polled for up to reconfigTimeout).
func (c *Cluster) reconfiguredAnyway(ctx context.Context, err error, add, remove []string) bool {
	if !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrNoServer) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, reconfigTimeout)
	defer cancel()
	var addrs []string
	for _, s := range c.servers {
		if s.pid() != 0 {
			addrs = append(addrs, s.addr())
		}
	}
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for !reconfigured(ctx, addrs, add, remove) {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}

// openSession opens a go-zookeeper session on addrs, waiting for it within
// ctx. The caller must Close it.
func openSession(ctx context.Context, addrs []string) (*zk.Conn, error) {
	conn, events, err := zk.Connect(addrs, 10*time.Second, zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("no session with %v: %w", addrs, ctx.Err())
		}
	}
	return conn, nil
}
