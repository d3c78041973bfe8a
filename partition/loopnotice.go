package partition

import (
	"time"

	"github.com/zkelect/zkelect/partition/internal/member"
)

// This file is the loop's first stage (step, loop.go): it feeds the core
// what the sessions changed since the last step: the session's
// replacement and lease (the restart grace, member.Grace) and the sibling
// sessions that cannot lead (per-session liveness, below), and gives the
// core the startup wait's facts (member.Core.ReconcileDue): reconcile
// starts no election until the membership settled, so members started
// together divide the shards without handing them on.

// notice feeds the core the session's replacement and lease
// (noticeSession, noteLease) and the seats that cannot lead (checkSeats).
func (l *loop) notice() member.Plan {
	p := l.noticeSession()
	l.noteLease()
	return p.And(l.checkSeats(time.Now()))
}

// startupFacts are the facts member.Core.ReconcileDue is given at now:
// the session's, and, during the startup wait, whether ExpectedMembers
// members running our shard list are live.
func (l *loop) startupFacts(now time.Time) member.Facts {
	f := l.facts(now)
	if n := l.m.cfg.ExpectedMembers; !l.core.Startup.Done() && n > 0 {
		f.ExpectedLive = l.selfLive() && l.expectedMembersLive(n)
	}
	return f
}

// expectedMembersLive reports whether n live members run our shard list,
// ourselves included: those whose record, written by their current
// session, names our list (or none, as older versions' records). A member
// running another list does not count (the shards are dealt only among
// members with the same list), nor one whose record we have not read yet:
// its list is unknown, and reading it ends the wait at once.
func (l *loop) expectedMembersLive(n int) bool {
	mine, me, live := l.m.currentShardSet(), l.m.cfg.MemberID, 0
	for id, sess := range l.view.Members {
		r, ok := l.view.Records[id]
		if id == me || ok && r.Session == sess && (r.ShardSet == "" || r.ShardSet == mine) && !l.m.campaignsFlat(r.Record) {
			live++
		}
	}
	return live >= n
}

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
func (l *loop) noticeSession() member.Plan {
	id := l.m.sess.ID()
	if id == 0 || id == l.session {
		return member.Plan{}
	}
	n, left, p := l.core.NewSession(time.Now(), l.session == 0)
	if left > 0 {
		l.m.log.Info().Int64("session_id", id).Int("shards", n).Dur("grace_left", left).
			Msg("new session: shards reserved")
	}
	l.session = id
	l.noteLease()
	return p
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

// Per-session liveness: a member leads
// the shards it is given, or gives them up. When one of its sibling
// sessions is down (member.SeatHealth) the shards whose elections sit on it
// cannot be led here: the member stops claiming them (their suspended
// claims and reservations end), publishes them as unavailable in its
// record, and every member's assignment deals them to another member
// (member.DealUnavailable). New elections are placed on the member's other
// sessions meanwhile (sessions.place skips a session that is down). Once
// the session is up again (its replacement, after an expiry), the marks
// go and the balance deals the shards as before. A member whose primary
// session is down leaves as a whole, as before: its member znode goes with
// the session.

// checkSeats feeds the core a look at every sibling session
// (member.Core.Seat: it marks the shards of one that went down and clears
// those of one that came back), and tells the session pool and the log
// what changed.
func (l *loop) checkSeats(now time.Time) member.Plan {
	var plan member.Plan
	for _, s := range l.m.pool.Siblings() {
		lease, ok := s.Sess.LeaseDeadlineOf(s.Sess.ID())
		look := member.SeatLook{Connected: s.Sess.Connected(), Lease: lease, LeaseKnown: ok, Timeout: s.Sess.Timeout()}
		change, p := l.core.Seat(s, look, func() []string { return l.m.pool.ShardsOn(s) }, now)
		switch change {
		case member.SeatWentDown:
			s.Down.Store(true)
			l.m.log.Warn().Int64("session_id", s.Sess.ID()).Dur("session_timeout", s.Sess.Timeout()).
				Msg("sibling session down: its shards are published as unavailable and dealt to other members")
		case member.SeatCameUp:
			s.Down.Store(false)
			l.m.log.Info().Int64("session_id", s.Sess.ID()).Msg("sibling session up again: its shards are dealt as before")
		}
		plan = plan.And(p)
	}
	return plan
}

// The collect period: the core is fed the other members' records
// (member.Core.Collect decides which to collect, and ages the loop's
// reservations, suspended leaderships and orphaned shards with them).

// collectEvery is the period of collect.
func (l *loop) collectEvery() time.Duration {
	return min(max(l.m.cfg.RestartGrace/4, 50*time.Millisecond), time.Second)
}

// collect is the collect period's tick at now (member.Core.Collect).
func (l *loop) collect(now time.Time) member.Plan {
	l.noteLease()
	var recs []member.Record
	if l.selfLive() {
		recs = make([]member.Record, 0, len(l.view.Records))
		for id, rec := range l.view.Records {
			_, live := l.view.Members[id]
			recs = append(recs, member.Record{ID: id, Version: rec.Version, Live: live, Leading: rec.Leading})
		}
	}
	return l.core.Collect(l.facts(now), l.selfLive(), recs)
}
