package recipe

import (
	"fmt"
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

// frameLimitError is a frame length over the reader's limit.
type frameLimitError struct{ length, limit int }

func (e *frameLimitError) Error() string {
	return fmt.Sprintf("frame of %d bytes, over the %d-byte limit", e.length, e.limit)
}

// foreignStreak tracks handshakes answered by something that is not
// ZooKeeper. go-zookeeper tries the servers' addresses round-robin, so a
// streak of such answers (with no other outcome between them) that comes
// back to an address it already holds has seen every address.
type foreignStreak struct {
	mu    sync.Mutex
	addrs map[string]bool
	err   error         // the latest answer, for Connect's error
	all   chan struct{} // closed once every address answered that way
	done  bool
}

func newForeignStreak() *foreignStreak {
	return &foreignStreak{addrs: map[string]bool{}, all: make(chan struct{})}
}

// add records that addr answered with a non-ZooKeeper frame.
func (f *foreignStreak) add(addr string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
	if f.addrs[addr] && !f.done {
		f.done = true
		close(f.all)
	}
	f.addrs[addr] = true
}

// reset ends the streak: an attempt had another outcome.
func (f *foreignStreak) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.addrs)
}

// cause returns the error to report once every address answered.
func (f *foreignStreak) cause() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
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
	err = fmt.Errorf("%s: %w: its answer to the connect request is a %w", addr, ErrNotZooKeeper, err)
	c.w.log.Warn().Str("server", addr).Err(err).Msg("server is not ZooKeeper")
	c.w.foreign.add(addr, err)
	return err
}
