package zkconn

import (
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// The session's one watch table. Every server-side watch the layer sets
// (the one-shot watches of GetW, ChildrenW and ExistsW, watch.go, and the
// routed data watches of WatchData, datawatch.go) is tracked here, and
// only here, by its key: the server keeps at most one watch per path and
// kind for a connection, shared by every user of the session. A key's
// users are its shots (one-shot watched reads) and, for a data watch, the
// sinks routed to its path. The table removes a server watch
// (removeWatches) when its last user leaves, never while another holds
// it; it forgets every watch when the connection drops, as the server
// does, and holds again only what a user re-reads on the next one.
//
// All its state is guarded by the session's mutex (its methods end in
// Locked); the removals it decides on are queued there and written once
// that is released (see wirequeue.go).

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

// jute returns the removeWatches watcher type of k.
func (k watchKind) jute() int32 {
	if k == watchChild {
		return jute.WatcherChildren
	}
	return jute.WatcherData
}

// watchKey names one server-side watch of the session: the server keeps at
// most one per path and kind for a connection.
type watchKey struct {
	path string
	kind watchKind
}

// watchTable is the session's watches and the routing of node events.
type watchTable struct {
	wire   *wireTracker
	routes map[string]sinkSet              // sinks of a path's node events
	bySink map[Sink]pathSet                // paths per sink: unsubscribe costs O(own paths)
	shots  map[watchKey]map[*shot]struct{} // one-shot watched reads (watch.go)
	armed  map[watchKey]bool               // watches the current connection may hold

	persistent *persistentTable // addWatch's watches (persistwatch.go)
}

func newWatchTable(wire *wireTracker) *watchTable {
	return &watchTable{
		wire:   wire,
		routes: map[string]sinkSet{},
		bySink: map[Sink]pathSet{},
		shots:  map[watchKey]map[*shot]struct{}{},
		armed:  map[watchKey]bool{},

		persistent: newPersistentTable(),
	}
}

// heldLocked reports whether a user still relies on the server watch of
// key: a shot of key or, for a data watch, a sink routed to its path.
func (t *watchTable) heldLocked(key watchKey) bool {
	return len(t.shots[key]) > 0 || key.kind == watchData && len(t.routes[key.path]) > 0
}

// armLocked records that the current connection holds the watch of key: a
// watched read of it was written or answered while connected. A watch
// recorded that the server no longer holds only costs a harmless removal
// (answered NOWATCHER); one missing would stay on the server.
func (t *watchTable) armLocked(key watchKey, connected bool) {
	if connected {
		t.armed[key] = true
	}
}

// releaseLocked queues removeWatches for key when nobody holds it any
// more and the connection may hold it, and reports whether it did; the
// caller flushes once the session's lock is released.
func (t *watchTable) releaseLocked(key watchKey, connected bool) bool {
	if t.heldLocked(key) || !connected || !t.armed[key] {
		return false
	}
	delete(t.armed, key)
	return t.wire.queueIfReady(jute.RemoveWatchesRequest(xidInjected, key.path, key.kind.jute()))
}

// routeLocked sends the node events of path to k.
func (t *watchTable) routeLocked(path string, k Sink) {
	t.routes[path] = t.routes[path].with(k)
	t.bySink[k] = t.bySink[k].with(path)
}

// unrouteLocked stops sending the node events of path to k.
func (t *watchTable) unrouteLocked(path string, k Sink) {
	if m := t.routes[path].without(k); len(m) > 0 {
		t.routes[path] = m
	} else {
		delete(t.routes, path)
	}
	if own := t.bySink[k].without(path); len(own) > 0 {
		t.bySink[k] = own
	} else {
		delete(t.bySink, k)
	}
}

// unsubscribeLocked stops routing every path of k.
func (t *watchTable) unsubscribeLocked(k Sink) {
	for _, p := range slices.Clone(t.bySink[k]) { // unrouteLocked shrinks it
		t.unrouteLocked(p, k)
	}
}

// nodeChangedLocked handles a watch event: the server's watches it ends are
// no longer held, the shots it ends fire, and the path's sinks get it.
// A shot whose reply has not been read yet is left alone: go-zookeeper
// handles frames in order, so the event came before the reply and is from
// an older watch than the one its request sets.
func (t *watchTable) nodeChangedLocked(ev zk.Event) {
	for _, kind := range []watchKind{watchData, watchChild} {
		if !kind.firedBy(ev.Type) {
			continue
		}
		key := watchKey{ev.Path, kind}
		delete(t.armed, key)
		for sh := range t.shots[key] {
			if sh.call.replied.Load() {
				t.fireLocked(sh, ev)
			}
		}
	}
	for _, k := range slices.Clone(t.routes[ev.Path]) { // a sink may leave while it is told
		k.NodeChanged(ev)
	}
	t.persistent.nodeChangedLocked(ev)
}

// connectionLostLocked forgets every watch (the server keeps watches per
// connection) and ends every answered shot with an EventNotWatching of
// state and cause. Shots still awaiting their reply are left to it: their
// request either went out on the lost connection (then the call fails) or
// goes out on the next one, which holds its watch.
func (t *watchTable) connectionLostLocked(state zk.State, cause error) {
	clear(t.armed)
	t.persistent.connectionLostLocked()
	for _, set := range t.shots {
		for sh := range set {
			if sh.call.replied.Load() {
				t.fireLocked(sh, zk.Event{Type: zk.EventNotWatching, State: state, Path: sh.key.path, Err: cause})
			}
		}
	}
}
