package zkconn

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// A server that is not ZooKeeper (an HTTP server, say, on a port given by
// mistake) answers the connect request with bytes that go-zookeeper v1.0.4
// reads as a frame length: "HTTP" is 1,213,486,160, and it allocates that
// many bytes before reading on. The session refuses such lengths in the
// wire wrapper (wireConn.Read), before go-zookeeper sees them: a connect
// response is about 40 bytes, so one over maxConnectResponse fails the
// handshake, and a reply over maxReplyFrame fails the connection (the
// Java client refuses replies over 4 MiB, its jute.maxbuffer default for
// clients; the bound here leaves four times that for long child lists).
// When every server has answered that way in turn, Connect fails at once
// with ErrNotZooKeeper instead of retrying until its timeout.
const (
	maxConnectResponse = 1 << 10
	maxReplyFrame      = 16 << 20
)

// NotZooKeeperError reports a server address that answered the connect
// request with another protocol (an HTTP or PostgreSQL port given by
// mistake). It matches ErrNotZooKeeper with errors.Is.
type NotZooKeeperError struct {
	Addr  string // host:port as dialled
	Cause error  // what gave it away, e.g. an impossible frame length
}

// Error says which address is not ZooKeeper and why.
func (e *NotZooKeeperError) Error() string {
	return fmt.Sprintf("%s is not a ZooKeeper server (it answered with another protocol: %v)", e.Addr, e.Cause)
}

// Unwrap makes errors.Is(err, ErrNotZooKeeper) true and keeps the cause.
func (e *NotZooKeeperError) Unwrap() []error { return []error{ErrNotZooKeeper, e.Cause} }

// maxCaptured bounds the body of a reply the layer keeps whole: every
// reply a ZooKeeper server may send.
const maxCaptured = maxReplyFrame

// foreignStreak tracks handshakes answered by something that is not
// ZooKeeper. go-zookeeper tries the servers' addresses round-robin, so a
// streak of such answers (with no other outcome between them) that comes
// back to an address it already holds has seen every address.
type foreignStreak struct {
	mu    sync.Mutex
	addrs map[string]bool
	all   chan struct{} // closed once every address answered that way
	done  bool
	seen  map[string]error // every address that ever answered that way, beyond the streak
}

func newForeignStreak() *foreignStreak {
	return &foreignStreak{addrs: map[string]bool{}, all: make(chan struct{}), seen: map[string]error{}}
}

// add records that addr answered with a non-ZooKeeper frame.
func (f *foreignStreak) add(addr string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[addr] = err
	if f.addrs[addr] && !f.done {
		f.done = true
		close(f.all)
	}
	f.addrs[addr] = true
}

// foreign returns the errors of every address that answered with another
// protocol so far, even when other addresses were merely closed (which
// breaks the streak), joined in address order; nil when none did.
func (f *foreignStreak) foreign() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	addrs := slices.Sorted(maps.Keys(f.seen))
	errs := make([]error, 0, len(addrs))
	for _, a := range addrs {
		errs = append(errs, f.seen[a])
	}
	return errors.Join(errs...)
}

// reset ends the streak: an attempt had another outcome.
func (f *foreignStreak) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.addrs)
}

// notForeign ends the tracker's streak of non-ZooKeeper answers.
func (w *wireTracker) notForeign() { w.foreign.reset() }

// oversized handles a frame over the reader's limit: it closes the
// connection and returns the error go-zookeeper's read fails with. Before
// the handshake completes the server is not ZooKeeper.
func (c *wireConn) oversized(err error) error {
	_ = c.Close()
	addr := c.RemoteAddr().String()
	if c.established.Load() {
		err = fmt.Errorf("reply from %s: %w", addr, err)
		c.w.log.Warn().Str("server", addr).Err(err).Msg("zookeeper reply too long; reconnecting")
		return err
	}
	err = &NotZooKeeperError{Addr: addr, Cause: fmt.Errorf("its answer to the connect request is a %w", err)}
	c.w.log.Warn().Str("server", addr).Err(err).Msg("server is not ZooKeeper")
	c.w.foreign.add(addr, err)
	return err
}
