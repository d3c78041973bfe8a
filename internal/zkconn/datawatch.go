package zkconn

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/znode"
)

// Routed data watches: a candidate's watch on its predecessor and on its
// own znode. The session sets them itself, never through go-zookeeper's
// GetW.
//
// go-zookeeper keeps one channel per successful GetW until the watch fires
// and cannot remove a watch. A candidate that leaves while waiting would
// leave its watch on the predecessor, and every later watcher of the same
// znode would add a channel, without bound. Instead the session writes its
// own watched read (WatchData) and reads its reply itself. The server
// sends a watch's event like any other; go-zookeeper passes it to the
// session's callback (holding no channel for it), which routes it to the
// sinks of the path (Route). The watch is one entry of the session's watch
// table (watchtable.go), shared with the one-shot watches of GetW and
// ExistsW on the same path: when its last user leaves (DropWatch, a shot
// forgotten), the session writes removeWatches, so nothing stays on the
// server.
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
	if err := znode.CheckPath(path); err != nil {
		return nil, err
	}
	key := watchKey{path, watchData}
	call := newPendingCall(s.wire.nextCallXid())
	if err := s.write(ctx, call, jute.ReadRequest(call.xid, jute.OpGetData, path, true), false); err != nil {
		return nil, fmt.Errorf("get data %s: %w", path, err)
	}
	s.arm(key)
	body, err := s.await(ctx, call)
	if err != nil {
		return nil, fmt.Errorf("get data %s: %w", path, err)
	}
	_, stat, err := decodeData(body)
	if err == nil {
		s.noteStat(path, stat)
		s.arm(key) // an older watch's event, read before the reply, unrecorded it
	}
	return stat, err
}

// arm records that the current connection may hold the watch of key.
func (s *Conn) arm(key watchKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches.armLocked(key, s.connected)
}

// Route sends the node events of path to k until Unroute or DropWatch.
func (s *Conn) Route(path string, k Sink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches.routeLocked(path, k)
}

// Unroute stops sending the node events of path to k, leaving the
// server's watch in place (one that fired, or that the znode's deletion
// ends anyway).
func (s *Conn) Unroute(path string, k Sink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches.unrouteLocked(path, k)
}

// DropWatch stops routing node events of path to k and, when no other user
// of this session (a sink routed to path, a GetW or ExistsW waiting on it)
// holds the data watch any more, removes it from the server. The removal
// is decided under s.mu and written after it (see wirequeue.go), ahead of
// any request written later: a new reader of the path re-arms the watch
// behind it.
func (s *Conn) DropWatch(path string, k Sink) {
	s.mu.Lock()
	s.watches.unrouteLocked(path, k)
	queued := s.watches.releaseLocked(watchKey{path, watchData}, s.connected)
	s.mu.Unlock()
	if queued {
		s.wire.flush()
	}
}
