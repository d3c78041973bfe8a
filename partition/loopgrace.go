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
// ours (noticeSession), or after one session timeout (dropSuspended): by
// then the session may have expired and the znode gone. Either way the
// claim becomes a reservation for the restart grace, as after an expiry:
// a record that showed the shard unclaimed while we are cut off, even for
// one write, would let the others' assignment deal it elsewhere for good.
//
// dropSuspended ends the claims suspended for longer than a session
// timeout.
func (l *loop) dropSuspended(now time.Time) {
	for _, s := range l.core.Grace.DropSuspended(now, l.m.sess.Timeout()) {
		l.core.Leading.End(s, now)
	}
}

// noticeSession reserves the shards assigned here when the session changes
// (the old one expired): this member comes back with new znodes, like a
// restart, and should get the same shards back within the restart grace.
// The grace counts from the old session's last lease deadline
// (grace.afterLoss), as the others count it: a member cut off for longer,
// whose record the others deleted and whose shards they took over, comes
// back reserving nothing, as a member restarted after its grace does.
func (l *loop) noticeSession() {
	id := l.m.sess.ID()
	if id == 0 || id == l.session {
		return
	}
	now := time.Now()
	until := l.core.Grace.AfterLoss(now)
	for _, s := range l.core.Grace.SuspendedLost(now, until) { // their znodes went with the old session
		l.core.Leading.End(s, now)
	}
	l.expireReservation(now)
	if l.session != 0 && now.Before(until) {
		n := 0
		for s, m := range l.targets {
			if m == l.m.cfg.MemberID && l.core.Grace.Reserve(s, now, until) {
				n++
			}
		}
		l.recordChanged = true
		l.m.log.Info().Int64("session_id", id).Int("shards", n).Dur("grace_left", until.Sub(now)).
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

// expireReservation ends the reservations and unseated marks whose time
// is over (member.Core.Expire), and wakes the loop when the next one's
// is.
func (l *loop) expireReservation(now time.Time) {
	l.carryOutPlan(l.core.Expire(now))
}
