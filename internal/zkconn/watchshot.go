package zkconn

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// Shots: the one-shot watches of GetW, ChildrenW and ExistsW (watch.go) in
// the session's watch table (watchtable.go).

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

// addShot records a shot for the request call, before the request is
// written, so that no event after its reply can be missed. When ctx ends
// first the shot is forgotten (see forgetShot). It fails with ErrClosed
// after Close.
func (s *Conn) addShot(ctx context.Context, key watchKey, call *pendingCall) (*shot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	sh := &shot{key: key, call: call, ch: make(chan zk.Event, 1)}
	t := s.watches
	set := t.shots[key]
	if set == nil {
		set = map[*shot]struct{}{}
		t.shots[key] = set
	}
	set[sh] = struct{}{}
	sh.stop = context.AfterFunc(ctx, func() { s.forgetShot(sh, true) })
	return sh, nil
}

// forgetShot ends a shot that did not fire. With remove, and when no other
// user of the session holds the server's watch, it writes removeWatches so
// nothing stays on the server.
func (s *Conn) forgetShot(sh *shot, remove bool) {
	s.mu.Lock()
	queued := false
	if !sh.done {
		s.watches.endLocked(sh)
		queued = remove && s.watches.releaseLocked(sh.key, s.connected)
	}
	s.mu.Unlock()
	if queued {
		s.wire.flush()
	}
}

// shotWritten is told that the request of sh is on the wire: the watch is
// held from now on. If sh was forgotten meanwhile (its ctx ended while the
// request was being written), a removal written then may have gone out
// ahead of the request, which then set a watch nobody holds: the removal
// is written again, behind the request, unless another user holds the
// watch by now.
func (s *Conn) shotWritten(sh *shot) {
	s.mu.Lock()
	again := false
	if !sh.fired {
		s.watches.armLocked(sh.key, s.connected)
		again = sh.done && s.watches.releaseLocked(sh.key, s.connected)
	}
	s.mu.Unlock()
	if again {
		s.wire.flush()
	}
}

// shotAnswered is told that the server answered the request of sh with
// its watch set: an event handled before the reply (from an older watch)
// may have cleared the record of it.
func (s *Conn) shotAnswered(sh *shot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sh.done {
		s.watches.armLocked(sh.key, s.connected)
	}
}

// endLocked takes sh out of the table.
func (t *watchTable) endLocked(sh *shot) {
	sh.done = true
	sh.stop()
	set := t.shots[sh.key]
	delete(set, sh)
	if len(set) == 0 {
		delete(t.shots, sh.key)
	}
}

// fireLocked delivers ev to sh and ends it.
func (t *watchTable) fireLocked(sh *shot, ev zk.Event) {
	t.endLocked(sh)
	sh.fired = true
	sh.ch <- ev
	close(sh.ch)
}
