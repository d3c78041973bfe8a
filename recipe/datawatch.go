package recipe

import "github.com/go-zookeeper/zk"

// go-zookeeper keeps one channel per GetW call until the watch fires, and
// ZooKeeper offers no way (in this client) to remove a watch. A candidate
// that leaves while watching its predecessor leaves that watch armed; the
// next candidate to watch the same predecessor would add another channel,
// and so on without bound. So the session remembers which paths already have
// an armed data watch and candidates read those with a plain getData: each
// path holds at most one armed watch per reconnect, and all of them fire
// (and are forgotten) when the znode changes or goes.

// dataWatchState tracks one path's data watch.
type dataWatchState struct {
	armed   bool // a GetW succeeded and its watch has not fired since
	pending int  // GetW calls in flight
	fired   bool // an event came while calls were in flight
}

// needDataWatch reports whether the caller must read path with GetW (true)
// or may read it with Get because a watch is armed (false). After a GetW the
// caller must call dataWatchDone.
func (s *Session) needDataWatch(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.dataWatch[path]
	if st != nil && st.armed {
		return false
	}
	if st == nil {
		st = &dataWatchState{}
		s.dataWatch[path] = st
	}
	st.pending++
	return true
}

// dataWatchDone records the outcome of a GetW on path.
func (s *Session) dataWatchDone(path string, armed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.dataWatch[path]
	if st == nil { // forgotten by a disconnect or expiry meanwhile
		return
	}
	st.pending--
	if armed && !st.fired {
		st.armed = true
	}
	if st.pending <= 0 {
		st.pending, st.fired = 0, false
		if !st.armed {
			delete(s.dataWatch, path)
		}
	}
}

// dataWatchFired forgets the armed watch of the event's path (s.mu held).
func (s *Session) dataWatchFired(ev zk.Event) {
	if ev.Type != zk.EventNodeDeleted && ev.Type != zk.EventNodeDataChanged {
		return
	}
	st := s.dataWatch[ev.Path]
	if st == nil {
		return
	}
	st.armed = false
	if st.pending > 0 {
		st.fired = true
		return
	}
	delete(s.dataWatch, ev.Path)
}

// dropWatch stops routing node events of path to k and, when no sink of
// this session watches path any more, removes the session's armed data
// watch from the server, so a candidate that leaves while waiting leaves no
// watch behind. The removal is written under s.mu, so no GetW of another
// candidate can slip in between the decision and the request.
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
	st := s.dataWatch[path]
	if st == nil || !st.armed || st.pending > 0 || !s.connected {
		return
	}
	if s.wire.removeDataWatch(path) {
		delete(s.dataWatch, path)
	}
}
