package electview

import (
	"sync/atomic"

	"github.com/zkelect/zkelect/recipe"
)

// Synced tells any goroutine whether the view is in sync with ZooKeeper
// now: its watch is held on the session's current connection and every
// election listed since the watch was added there has been read (reads
// that follow later notifications, such as a new election's, do not take
// it out of sync: the watch delivered those changes in order). Right
// after a reconnect it is not, until the root is listed and read again (a
// change made while the watch was away is known only then); a follower
// that calls its view fresh while the session is connected (the routing
// client) asks it too.
type Synced struct {
	watch *recipe.TreeWatch
	state atomic.Uint64 // the connection of the last relist << 1 | settled
}

// Now reports whether the view is in sync now; false before the first
// listing is read. It does not see a connection lost since (the watch's
// events stop with it): ask recipe.Session.Connected too.
func (s *Synced) Now() bool {
	st := s.state.Load()
	return s.watch != nil && st&1 == 1 && st>>1 == s.watch.Connection()
}

// set records the follower's state: the connection its last relist was
// for and whether that relist has been read.
func (s *Synced) set(conn uint64, settled bool) {
	st := conn << 1
	if settled {
		st |= 1
	}
	s.state.Store(st)
}

// Synced returns the view's sync state, for other goroutines.
func (t *Elections) Synced() *Synced { return t.sync }
