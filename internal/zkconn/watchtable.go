package zkconn

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// This file keeps the one-shot watches of GetW, ChildrenW and ExistsW (see
// watch.go). The table is a Sink: it is routed the node events of
// every path it holds a watch on, and gets every session change. All its
// state is guarded by the session's mutex; the removals it decides on are
// written after that is released (see wirequeue.go).

// watchKind is the server's watch table a watched read sets its watch in.
type watchKind uint8

const (
	watchData  watchKind = iota + 1 // getData and exists (of a missing znode too)
	watchChild                      // getChildren
)

// firedBy reports whether an event of type t ends a watch of kind k.
func (k watchKind) firedBy(t zk.EventType) bool {
	switch t {
	case zk.EventNodeDeleted:
		return true
	case zk.EventNodeCreated, zk.EventNodeDataChanged:
		return k == watchData
	case zk.EventNodeChildrenChanged:
		return k == watchChild
	}
	return false
}

// watchKey names one server-side watch of the session: the server keeps at
// most one per path and table for a connection, shared by every shot.
type watchKey struct {
	path string
	kind watchKind
}

// shot is one watched read's interest in its watch, from before its
// request is written until the watch fires, ctx ends or the read fails.
type shot struct {
	key   watchKey
	call  *pendingCall  // the request that sets the watch
	ch    chan zk.Event // capacity 1: one event, then closed
	stop  func() bool   // releases the ctx hook
	done  bool          // fired or forgotten
	fired bool          // ended by an event (fireLocked)
}

// watchTable holds the session's shots.
type watchTable struct {
	s     *Conn
	shots map[watchKey]map[*shot]struct{}
}

func newWatchTable(s *Conn) *watchTable {
	return &watchTable{s: s, shots: map[watchKey]map[*shot]struct{}{}}
}

// add records a shot for the request call, before the request is written,
// so that no event after its reply can be missed. When ctx ends first the
// shot is forgotten (see cancel). It fails with ErrClosed after
// Close.
func (t *watchTable) add(ctx context.Context, key watchKey, call *pendingCall) (*shot, error) {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	sh := &shot{key: key, call: call, ch: make(chan zk.Event, 1)}
	set := t.shots[key]
	if set == nil {
		set = map[*shot]struct{}{}
		t.shots[key] = set
	}
	set[sh] = struct{}{}
	sinks := s.paths[key.path]
	if sinks == nil {
		sinks = map[Sink]struct{}{}
		s.paths[key.path] = sinks
	}
	sinks[t] = struct{}{}
	if key.kind == watchData && s.connected {
		s.dataWatch[key.path] = true // so a data sink leaving after us removes it
	}
	sh.stop = context.AfterFunc(ctx, func() { t.forget(sh, true) })
	return sh, nil
}

// forget ends a shot that did not fire. With remove, and when no one else
// of the session relies on the server's watch any more, it writes
// removeWatches so nothing stays on the server (a watch that was never set
// is answered NOWATCHER: harmless).
func (t *watchTable) forget(sh *shot, remove bool) {
	t.s.mu.Lock()
	queued := !sh.done && t.endLocked(sh) && remove && t.removeWatchLocked(sh.key)
	t.s.mu.Unlock()
	if queued {
		t.s.wire.flush()
	}
}

// written is told that the request of sh is on the wire. If sh was
// forgotten meanwhile (its ctx ended while the request was being written),
// the removal forget wrote may have gone out ahead of the request, which
// then set a watch nobody tracks: the removal is written again, behind the
// request, unless another shot of the key relies on the watch by now.
func (t *watchTable) written(sh *shot) {
	s := t.s
	s.mu.Lock()
	again := sh.done && !sh.fired && len(t.shots[sh.key]) == 0 && t.removeWatchLocked(sh.key)
	s.mu.Unlock()
	if again {
		s.wire.flush()
	}
}

// endLocked takes sh out of the table and reports whether it was the last shot
// of its key (s.mu held).
func (t *watchTable) endLocked(sh *shot) bool {
	sh.done = true
	sh.stop()
	set := t.shots[sh.key]
	delete(set, sh)
	if len(set) > 0 {
		return false
	}
	delete(t.shots, sh.key)
	p := sh.key.path
	if len(t.shots[watchKey{p, watchData}])+len(t.shots[watchKey{p, watchChild}]) == 0 {
		t.s.unrouteLocked(p, t)
	}
	return true
}

// removeWatchLocked queues removeWatches for key unless the server's watch is
// still needed, by a data sink of the session (candidates, see
// datawatch.go) for a data watch, and reports whether it did; the caller
// flushes once s.mu is released (s.mu held).
func (t *watchTable) removeWatchLocked(key watchKey) bool {
	s := t.s
	if !s.connected {
		return false // the server dropped the connection's watches
	}
	if key.kind == watchChild {
		return s.wire.queueIfReady(jute.RemoveWatchesRequest(xidInjected, key.path, jute.WatcherChildren))
	}
	for k := range s.paths[key.path] {
		if k != Sink(t) {
			return false
		}
	}
	delete(s.dataWatch, key.path)
	return s.wire.queueIfReady(jute.RemoveWatchesRequest(xidInjected, key.path, jute.WatcherData))
}

// fireLocked delivers ev to sh and ends it (s.mu held).
func (t *watchTable) fireLocked(sh *shot, ev zk.Event) {
	t.endLocked(sh)
	sh.fired = true
	sh.ch <- ev
	close(sh.ch)
}

// NodeChanged fires the shots that ev ends. A shot whose reply has not been
// read yet is left alone: go-zookeeper handles frames in order, so the
// event came before the reply and is from an older watch than the one its
// request sets.
func (t *watchTable) NodeChanged(ev zk.Event) {
	for _, kind := range []watchKind{watchData, watchChild} {
		if !kind.firedBy(ev.Type) {
			continue
		}
		for sh := range t.shots[watchKey{ev.Path, kind}] {
			if sh.call.replied.Load() {
				t.fireLocked(sh, ev)
			}
		}
	}
}

// SessionChanged ends every answered shot with an EventNotWatching when the
// connection drops, the session expires or closes: the server keeps watches
// per connection, so they are gone. Shots still awaiting their reply are
// left to it: their request either went out on the lost connection (then
// the call fails) or goes out on the next one, which holds its watch.
func (t *watchTable) SessionChanged(ev Event) {
	var state zk.State
	var cause error
	switch ev.Kind {
	case Disconnected:
		state, cause = zk.StateDisconnected, zk.ErrConnectionClosed
	case Expired:
		state, cause = zk.StateExpired, zk.ErrSessionExpired
	case Closed:
		state, cause = zk.StateDisconnected, zk.ErrClosing
	default:
		return
	}
	for _, set := range t.shots {
		for sh := range set {
			if sh.call.replied.Load() {
				t.fireLocked(sh, zk.Event{Type: zk.EventNotWatching, State: state, Path: sh.key.path, Err: cause})
			}
		}
	}
}
