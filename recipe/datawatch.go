package recipe

import "github.com/go-zookeeper/zk"

// Data watches are set by the session itself, not by go-zookeeper's GetW.
//
// go-zookeeper keeps one channel per successful GetW until the watch fires
// and cannot remove a watch. A candidate that leaves while waiting would
// leave its watch on the predecessor, and every later watcher of the same
// znode would add a channel, without bound. Instead, to read a znode with a
// watch the session writes its own getData(watch=true) request on the wire
// and then reads the znode with go-zookeeper's plain Get: the server answers
// both in order on one connection, so if the Get finds the znode, the watch
// is set. The server sends the watch's event like any other; go-zookeeper
// passes it to the session's callback (holding no channel for it), which
// routes it to the sinks of the path. When the last sink of a path leaves,
// the session writes removeWatches, so nothing stays on the server.
//
// The server keeps watches per connection: after a reconnect they are gone
// (go-zookeeper re-sets only its own). Every user re-reads after a
// reconnect anyway (watches may have fired unseen), which re-arms them.

// readWatched reads path with getData and leaves a data watch on it. If no
// connection is ready to carry the watch it fails like a lost connection
// (zk.ErrConnectionClosed), never with a read that sets no watch.
func (s *Session) readWatched(conn *zk.Conn, path string) ([]byte, *zk.Stat, error) {
	if !s.armDataWatch(path) {
		return nil, nil, zk.ErrConnectionClosed
	}
	return conn.Get(path)
}

// armDataWatch writes getData(path, watch=true) on the current connection
// once it is ready, and remembers that the path may hold a watch.
func (s *Session) armDataWatch(path string) bool {
	c := s.wire.readyConn(s.wire.timeout())
	if c == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.inject(getDataWatchFrame(path)) {
		return false
	}
	s.dataWatch[path] = true
	return true
}

// needDataWatch is the older form of readWatched for callers that read
// with go-zookeeper themselves: it arms the watch and returns false, meaning
// "now read with a plain Get"; if it could not arm the watch it returns
// true, meaning "read with GetW" (then call dataWatchDone).
func (s *Session) needDataWatch(path string) bool {
	return !s.armDataWatch(path)
}

// dataWatchDone is kept for callers of needDataWatch; nothing to record.
func (s *Session) dataWatchDone(string, bool) {}

// dataWatchFired forgets the watch of the event's path (s.mu held).
func (s *Session) dataWatchFired(ev zk.Event) {
	if ev.Type == zk.EventNodeDeleted || ev.Type == zk.EventNodeDataChanged {
		delete(s.dataWatch, ev.Path)
	}
}

// dropWatch stops routing node events of path to k and, when no sink of
// this session watches path any more, removes the session's data watch from
// the server. The removal is written under s.mu, after which a new reader
// of the path (who registers with watchPath first) re-arms it.
func (s *Session) dropWatch(path string, k sessionSink) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.paths[path]; m != nil {
		delete(m, k)
		if len(m) > 0 {
			return
		}
		delete(s.paths, path)
	}
	if s.dataWatch[path] && s.connected { // a watch that was not set gets NOWATCHER: harmless
		s.wire.injectIfReady(removeWatchesFrame(path))
	}
	delete(s.dataWatch, path)
}
