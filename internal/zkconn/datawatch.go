package zkconn

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// Data watches are set by the session itself, never by go-zookeeper's
// GetW.
//
// go-zookeeper keeps one channel per successful GetW until the watch fires
// and cannot remove a watch. A candidate that leaves while waiting would
// leave its watch on the predecessor, and every later watcher of the same
// znode would add a channel, without bound. Instead the session writes its
// own watched reads on the wire and reads their replies itself:
// WatchData below (a candidate's watch on its predecessor) and the
// layer's GetW, ChildrenW and ExistsW (watch.go, used by Observe). The
// server sends a watch's event like any other; go-zookeeper passes it to
// the session's callback (holding no channel for it), which routes it to
// the sinks of the path. When the last sink of a path leaves, the session
// writes removeWatches, so nothing stays on the server.
//
// The server keeps watches per connection: after a reconnect they are gone
// (go-zookeeper re-sets only its own). Every user re-reads after a
// reconnect anyway (watches may have fired unseen), which re-arms them.

// WatchData reads path's Stat with one getData(watch=true) that the layer
// writes and whose reply it reads itself (see wirecall.go), so the read and
// the watch are one request: if the znode exists the watch is set, and its
// event goes to the sinks Route registered for path. If no connection is
// ready to carry it, or the connection drops before the reply, it fails
// like a lost connection (an error wrapping zk.ErrConnectionClosed), never
// with a read that sets no watch; it fails with ctx's error once ctx ends.
// Other errors are as for Get (zk.ErrNoNode: no watch is set).
func (s *Conn) WatchData(ctx context.Context, path string) (*zk.Stat, error) {
	if err := CheckPath(path); err != nil {
		return nil, err
	}
	call := newPendingCall(s.wire.nextCallXid())
	if err := s.write(ctx, call, jute.ReadRequest(call.xid, jute.OpGetData, path, true), false); err != nil {
		return nil, fmt.Errorf("get data %s: %w", path, err)
	}
	s.markDataWatch(path)
	body, err := s.await(ctx, call)
	if err != nil {
		return nil, fmt.Errorf("get data %s: %w", path, err)
	}
	_, stat, err := decodeData(body)
	return stat, err
}

// markDataWatch remembers that path may hold a data watch, if the session
// is connected: a watch written on a connection that has dropped since is
// gone with it.
func (s *Conn) markDataWatch(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.connected {
		s.dataWatch[path] = true
	}
}

// dataWatchFired forgets the watch of the event's path (s.mu held).
func (s *Conn) dataWatchFired(ev zk.Event) {
	if ev.Type == zk.EventNodeDeleted || ev.Type == zk.EventNodeDataChanged {
		delete(s.dataWatch, ev.Path)
	}
}

// DropWatch stops routing node events of path to k and, when no sink of
// this session watches path any more, removes the session's data watch from
// the server. The removal is decided under s.mu and written after it (see
// wirequeue.go), ahead of any request written later: a new reader of the
// path (who registers with watchPath first) re-arms the watch behind it.
func (s *Conn) DropWatch(path string, k Sink) {
	if s.dropWatchLocked(path, k) {
		s.wire.flush()
	}
}

// dropWatchLocked is DropWatch under s.mu; it reports whether it queued the
// removal, which the caller flushes once s.mu is released.
func (s *Conn) dropWatchLocked(path string, k Sink) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.paths[path]; m != nil {
		delete(m, k)
		if len(m) > 0 {
			return false
		}
		delete(s.paths, path)
	}
	queued := false
	if s.dataWatch[path] && s.connected { // a watch that was not set gets NOWATCHER: harmless
		queued = s.wire.queueIfReady(jute.RemoveWatchesRequest(xidInjected, path, jute.WatcherData))
	}
	delete(s.dataWatch, path)
	return queued
}
