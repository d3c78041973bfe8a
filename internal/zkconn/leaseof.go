package zkconn

import "time"

// LeaseDeadlineOf is LeaseDeadline for the session id only: ok is false
// when the connection holds another session (or none) at any point of the
// read, or nothing vouches for id yet. A handshake swaps the session id
// before it resets and renews the lease, so a deadline read between two
// reads of the same id is that session's, never its successor's: what a
// caller needs that counts a lost session's grace from its lease.
func (s *Conn) LeaseDeadlineOf(id int64) (time.Time, bool) {
	if id == 0 || s.wire.sessionID.Load() != id {
		return time.Time{}, false
	}
	d, ok := s.wire.leaseDeadline()
	if !ok || s.wire.sessionID.Load() != id {
		return time.Time{}, false
	}
	return d, true
}
