package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// This file follows a whole subtree with one persistent recursive watch
// (ZooKeeper 3.6+ addWatch): an observer of thousands of elections holds
// one server watch instead of one per election, and learns of every
// candidate created or deleted under it from one notification each.

// maxTreeEvents bounds the events a TreeWatch queues for a reader that
// falls behind; past it they are dropped and the next batch asks for a
// re-read (TreeChanges.Resync).
const maxTreeEvents = 1 << 20

// TreeChanges is one batch of a TreeWatch.
type TreeChanges struct {
	// Events are the creations, data changes and deletions under the path
	// (zk.EventNodeCreated, zk.EventNodeDataChanged, zk.EventNodeDeleted),
	// in the order the server sent them.
	Events []zk.Event
	// Resync is set when changes may have been missed: the watch was added
	// again on a new connection (the server forgets watches with a
	// connection), or the reader fell more than a million events behind.
	// The reader re-reads everything it follows; Events is then empty.
	Resync bool
	// At is when the first of Events reached this process (the receive
	// goroutine's clock): a reader measures its own lag from it.
	At time.Time
	// Conn is, with Resync, the connection the watch was added again on
	// (TreeWatch.Connection's count at that time): what the reader re-reads
	// is in sync with ZooKeeper while Connection still returns it.
	Conn uint64
}

// TreeWatch is a persistent recursive watch on one path of a session.
// Next returns its changes; Close removes it. One goroutine reads it.
type TreeWatch struct {
	s    *Session
	path string
	sink *sink
	kick chan struct{} // capacity 1

	conns atomic.Uint64 // connections seen since WatchTree (Connection)

	mu       sync.Mutex
	events   []zk.Event
	firstAt  time.Time // when events[0] arrived
	rearm    bool      // a new connection: add the watch again, then Resync
	overflow bool

	closeOnce sync.Once
}

// WatchTree adds a persistent recursive watch on path (which need not
// exist) and returns it once the server holds it: every change under path
// made after WatchTree returns is in a later TreeChanges, or a Resync
// says it may have been missed. Read the state you follow after WatchTree
// returns. While the session is disconnected it waits for the next
// connection, at most the session timeout. Errors: ErrNilSession,
// ErrInvalidPath, ErrSessionClosed, ErrACLDenied (wrapped), an error
// wrapping zk.ErrConnectionClosed, a server before 3.6 (UNIMPLEMENTED,
// wrapped), ctx's error. Close it.
func (s *Session) WatchTree(ctx context.Context, path string) (*TreeWatch, error) {
	if s == nil {
		return nil, ErrNilSession
	}
	w := &TreeWatch{s: s, path: path, kick: make(chan struct{}, 1)}
	w.sink = &sink{session: w.sessionChanged, node: w.nodeChanged}
	s.conn.Subscribe(w.sink)
	s.conn.RoutePersistent(path, true, w.sink)
	if err := s.read(ctx, func() error { return s.conn.AddWatch(ctx, path, true) }); err != nil {
		w.Close()
		return nil, sessionErr(s, denied(err))
	}
	return w, nil
}

// Connection counts the connections the session made since WatchTree was
// called (0 on the one it added the watch on). It goes up as a connection
// is made, before any of that connection's answers reach a reader, so a
// reader that re-read everything after the Resync whose Conn equals it is
// in sync. Safe from any goroutine.
func (w *TreeWatch) Connection() uint64 { return w.conns.Load() }

func (w *TreeWatch) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// sessionChanged runs on the receive goroutine with the Conn's lock held.
func (w *TreeWatch) sessionChanged(ev zkconn.Event) {
	if ev.Kind != zkconn.Connected {
		return
	}
	w.conns.Add(1)
	w.mu.Lock()
	w.rearm = true
	w.mu.Unlock()
	w.wake()
}

// nodeChanged runs on the receive goroutine with the Conn's lock held.
func (w *TreeWatch) nodeChanged(ev zk.Event) {
	if ev.Type == zk.EventNodeChildrenChanged {
		return // a one-shot watch's on the same path
	}
	w.mu.Lock()
	if len(w.events) == 0 {
		w.firstAt = time.Now()
	}
	if len(w.events) < maxTreeEvents {
		w.events = append(w.events, ev)
	} else {
		w.overflow, w.events = true, nil
	}
	w.mu.Unlock()
	w.wake()
}

// Next blocks until there are changes, and returns them. After a new
// connection it adds the watch again before it returns a Resync (retrying
// while the session lives and the error is connection loss or expiry).
// It fails with ctx's error, an error wrapping ErrSessionClosed once the
// session is closed, the session's EndErr once it ended for good
// (Session.Ended), or the server's refusal to add the watch (NOAUTH,
// UNIMPLEMENTED, ...), wrapped with the path.
func (w *TreeWatch) Next(ctx context.Context) (TreeChanges, error) {
	var b retry.Backoff
	for {
		w.mu.Lock()
		rearm, overflow, events, at := w.rearm, w.overflow, w.events, w.firstAt
		w.rearm, w.overflow, w.events = false, false, nil
		w.mu.Unlock()
		switch {
		case rearm:
			conn := w.conns.Load() // before the add: a later connection asks again
			if err := w.s.conn.AddWatch(ctx, w.path, true); err != nil {
				if ctx.Err() != nil {
					return TreeChanges{}, ctx.Err()
				}
				if !rearmRetryable(err) {
					return TreeChanges{}, fmt.Errorf("recipe: add the watch on %s again: %w", w.path, err)
				}
				w.mu.Lock()
				w.rearm = true
				w.mu.Unlock()
				if !w.pause(ctx, b.Next()) {
					return TreeChanges{}, w.endErr(ctx)
				}
				continue
			}
			return TreeChanges{Resync: true, Conn: conn}, nil
		case overflow:
			return TreeChanges{Resync: true, Conn: w.conns.Load()}, nil
		case len(events) > 0:
			return TreeChanges{Events: events, At: at}, nil
		}
		select {
		case <-w.kick:
		case <-ctx.Done():
			return TreeChanges{}, ctx.Err()
		case <-w.s.Done():
			return TreeChanges{}, ErrSessionClosed
		case <-w.s.Ended():
			return TreeChanges{}, w.endErr(ctx)
		}
	}
}

// rearmRetryable reports whether a failed AddWatch is tried again:
// connection loss and the like, or an expired session (a new one follows
// unless the session ended, which Next also watches); not a refusal.
func rearmRetryable(err error) bool {
	return Retryable(err) || zkconn.Classify(err) == jute.ClassSessionOver && !errors.Is(err, zkconn.ErrClosed)
}

// pause waits d, or less when a connection comes; false once ctx ended or
// the session closed.
func (w *TreeWatch) pause(ctx context.Context, d time.Duration) bool {
	next := w.s.NextConnect()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-next:
	case <-ctx.Done():
		return false
	case <-w.s.Done():
		return false
	case <-w.s.Ended():
		return false
	}
	return true
}

func (w *TreeWatch) endErr(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := w.s.EndErr(); err != nil {
		return err
	}
	return ErrSessionClosed
}

// Close removes the watch from the server (unless a one-shot watch of the
// session shares its path) and stops its routing; idempotent.
func (w *TreeWatch) Close() {
	w.closeOnce.Do(func() {
		w.s.conn.RemovePersistent(w.path, true, w.sink)
		w.s.conn.Unsubscribe(w.sink)
	})
}
