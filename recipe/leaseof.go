package recipe

import "time"

// LeaseDeadlineOf returns the instant, on this process's monotonic clock,
// before which ZooKeeper cannot have expired session id: the latest
// instant its quorum leader is known to have heard of it (see
// LeaseRemaining) plus the negotiated timeout. ok is false unless the
// lease was earned by session id (a later session's syncs never vouch for
// it) and something vouched for it. After the session is lost the deadline stays where the last
// answered sync left it, until a new session replaces id; the partition
// manager counts a lost session's restart grace from it, as the other
// members count theirs from its expiry, which cannot come earlier.
func (s *Session) LeaseDeadlineOf(id int64) (time.Time, bool) { return s.conn.LeaseDeadline(id) }
