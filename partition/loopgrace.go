package partition

import "time"

// This file is the loop's side of the restart grace (member.Grace): what it
// reserves when a session is lost or a leadership expires, and when the
// claims it keeps for suspended leaderships end.

// holdSuspended is why a leadership suspended by a lost connection stays
// in our record: our candidate's znode is still first and, once the
// session answers again, leads again with the same token. Every member
// reconnects at once after a quorum-leader failover and regains thousands
// of shards over a moment; a record that dropped them meanwhile would show
// them orphaned to the others, whose assignment would deal them elsewhere,
// and we would pass them on when we regained them (and get them back
// later): two moves for a failover every session survived. The claim ends
// when the shard is led again, its runner ends, a new session replaces
// ours (noticeSession), or after one session timeout (member.Core.Collect):
// by then the session may have expired and the znode gone. Either way the
// claim becomes a reservation for the restart grace, as after an expiry:
// a record that showed the shard unclaimed while we are cut off, even for
// one write, would let the others' assignment deal it elsewhere for good.
//
// noticeSession feeds the core a replaced session (member.Core.NewSession:
// the old one expired, and the shards assigned here are reserved for the
// rest of the grace).
func (l *loop) noticeSession() {
	id := l.m.sess.ID()
	if id == 0 || id == l.session {
		return
	}
	n, left, p := l.core.NewSession(time.Now(), l.session == 0)
	l.carryOutPlan(p)
	if left > 0 {
		l.m.log.Info().Int64("session_id", id).Int("shards", n).Dur("grace_left", left).
			Msg("new session: shards reserved")
	}
	l.session = id
	l.noteLease()
}

// noteLease notes the lease deadline of the session the loop knows (not
// its replacement, which noticeSession has not seen yet).
func (l *loop) noteLease() {
	if l.session == 0 {
		return
	}
	if d, ok := l.m.sess.LeaseDeadlineOf(l.session); ok {
		l.core.Grace.NoteLease(d)
	}
}
