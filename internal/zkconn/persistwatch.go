package zkconn

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/znode"
)

// Persistent watches (ZooKeeper 3.6+ addWatch): a watch that stays set
// after it fires, on one path or, recursive, on a path and everything
// under it. One such watch on an election subtree tells an observer of
// every candidate created or deleted under it, at the cost of one server
// watch however many elections it holds.
//
// The server keeps them per connection, like every watch: after a
// reconnect they are gone (go-zookeeper's setWatches re-sets only its
// own). A user re-adds its watch when the session is Connected again and
// re-reads what it follows, since events may have fired unseen. Their
// events reach the sinks routed to the watched path (RoutePersistent), on
// the same callback as every node event (events.go), besides the one-shot
// table's routing (watchtable.go), which they do not touch: the server
// sends one notification per change and connection, whichever watches of
// the connection it triggers, so a change under a persistent watch that
// also ends a one-shot watch is one event for both.

// persistentKey names one persistent watch of the session.
type persistentKey struct {
	path      string
	recursive bool
}

// covers reports whether an event on p reaches the watch of k.
func (k persistentKey) covers(p string) bool {
	if p == k.path {
		return true
	}
	if !k.recursive {
		return false
	}
	return k.path == "/" || strings.HasPrefix(p, k.path+"/")
}

// persistentTable routes persistent watches' events; guarded by the
// session's mutex (its methods end in Locked).
type persistentTable struct {
	routes map[persistentKey]sinkSet
	armed  map[persistentKey]bool // watches the current connection may hold
}

func newPersistentTable() *persistentTable {
	return &persistentTable{routes: map[persistentKey]sinkSet{}, armed: map[persistentKey]bool{}}
}

// nodeChangedLocked gives ev to the sinks of every persistent watch it
// reaches. NodeChildrenChanged, which a recursive watch never sends, is a
// one-shot watch's: a persistent watch on the path also has it.
func (t *persistentTable) nodeChangedLocked(ev zk.Event) {
	for k, sinks := range t.routes {
		if !k.covers(ev.Path) || k.recursive && ev.Type == zk.EventNodeChildrenChanged {
			continue
		}
		for _, s := range slices.Clone(sinks) {
			s.NodeChanged(ev)
		}
	}
}

// otherModeLocked reports whether the other mode's persistent watch on
// key's path is still routed (removal by Any would end it too).
func (t *persistentTable) otherModeLocked(key persistentKey) bool {
	return len(t.routes[persistentKey{key.path, !key.recursive}]) > 0
}

// connectionLostLocked forgets every persistent watch: the server dropped
// them with the connection.
func (t *persistentTable) connectionLostLocked() { clear(t.armed) }

// AddWatch sets a persistent watch on path (recursive: on path and every
// path under it) with one addWatch request (ZooKeeper 3.6+), and waits for
// the answer. Its events go to the sinks RoutePersistent registered for
// the same path and mode; route before adding, so that no event is missed.
// The watch lasts until RemovePersistent, the connection's end (a user
// re-adds it on the next Connected event) or Close; path need not exist.
// Errors are as for Get (a server before 3.6 answers UNIMPLEMENTED, a
// *CodeError); a watch whose answer is lost may still be set (a harmless
// duplicate of a later one: the server keeps one per path and mode).
func (s *Conn) AddWatch(ctx context.Context, path string, recursive bool) error {
	if err := znode.CheckPath(path); err != nil {
		return err
	}
	mode := jute.AddWatchPersistent
	if recursive {
		mode = jute.AddWatchPersistentRecursive
	}
	call := newPendingCall(s.wire.nextCallXid())
	if err := s.write(ctx, call, jute.AddWatchRequest(call.xid, path, mode), true); err != nil {
		return fmt.Errorf("add watch %s: %w", path, err)
	}
	s.mu.Lock()
	if s.connected {
		s.watches.persistent.armed[persistentKey{path, recursive}] = true
	}
	s.mu.Unlock()
	body, err := s.await(ctx, call)
	if err != nil {
		return fmt.Errorf("add watch %s: %w", path, err)
	}
	return decodeAddWatch(body)
}

// decodeAddWatch checks an addWatch reply (header first): the server
// answers an ErrorResponse, one int32 (0) after the header.
func decodeAddWatch(reply []byte) error {
	body, err := replyBody("add watch", reply)
	if err == nil && len(body) != 4 {
		err = malformed("add watch", fmt.Errorf("%w (%d bytes, want 4)", jute.ErrMalformed, len(body)))
	}
	return err
}

// RoutePersistent sends the events of the persistent watch on path (of
// that mode) to k until RemovePersistent (Unsubscribe leaves it).
func (s *Conn) RoutePersistent(path string, recursive bool, k Sink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := persistentKey{path, recursive}
	t := s.watches.persistent
	t.routes[key] = t.routes[key].with(k)
}

// RemovePersistent stops sending the events of the persistent watch on
// path to k and, when no other sink of this session is routed to it,
// removes the watch from the server (written once s.mu is released, ahead
// of any later request; see wirequeue.go). A watch the connection no
// longer holds costs nothing. The removal names WatcherType Any (the only
// one ZooKeeper 3.6 to 3.8 remove a persistent watch with), which would
// end a one-shot watch of the session on the same path too: while the
// one-shot table holds one there, the persistent watch is left to the
// connection's end (its events then reach no sink).
func (s *Conn) RemovePersistent(path string, recursive bool, k Sink) {
	key := persistentKey{path, recursive}
	s.mu.Lock()
	t := s.watches.persistent
	queued := false
	if m := t.routes[key].without(k); len(m) > 0 {
		t.routes[key] = m
	} else {
		delete(t.routes, key)
		shared := s.watches.heldLocked(watchKey{path, watchData}) || s.watches.heldLocked(watchKey{path, watchChild})
		if s.connected && t.armed[key] && !shared && !t.otherModeLocked(key) {
			delete(t.armed, key)
			queued = s.wire.queueIfReady(jute.RemoveWatchesRequest(xidInjected, path, jute.WatcherAny))
		}
	}
	s.mu.Unlock()
	if queued {
		s.wire.flush()
	}
}
