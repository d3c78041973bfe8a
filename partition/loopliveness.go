package partition

import (
	"time"

	"github.com/zkelect/zkelect/partition/internal/member"
	"github.com/zkelect/zkelect/partition/internal/shard"
)

// This file is the loop's side of per-session liveness: a member leads
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

// checkSeats looks at every sibling session, marks the shards of one that
// went down and clears those of one that came back, and wakes the loop
// when a session not connected now will be down.
func (l *loop) checkSeats(now time.Time) {
	for _, s := range l.m.pool.Siblings() {
		h := l.seatHealth[s]
		if h == nil {
			h = &member.SeatHealth{}
			l.seatHealth[s] = h
		}
		lease, ok := s.Sess.LeaseDeadlineOf(s.Sess.ID())
		wasDown := h.Down()
		down, at := h.Observe(now, s.Sess.Connected(), lease, ok, s.Sess.Timeout())
		if !at.IsZero() {
			l.wakeIn(at.Sub(now))
		}
		switch {
		case down:
			if !wasDown {
				s.Down.Store(true)
				l.m.log.Warn().Int64("session_id", s.Sess.ID()).Dur("session_timeout", s.Sess.Timeout()).
					Msg("sibling session down: its shards are published as unavailable and dealt to other members")
			}
			if h.DueMark(now, s.Sess.Timeout()/2) {
				l.markUnavailable(s)
			}
		case wasDown:
			s.Down.Store(false)
			if l.core.Unavail.ClearSeat(s) {
				l.core.Steps.Dirty, l.recordChanged = true, true
			}
			l.m.log.Info().Int64("session_id", s.Sess.ID()).Msg("sibling session up again: its shards are dealt as before")
		}
	}
}

// markUnavailable marks the shards whose elections sit on the down seat s
// and are not led here, and ends our claims on them
// (member.Core.MarkUnavailable).
func (l *loop) markUnavailable(s *shard.Seat) {
	if l.core.MarkUnavailable(l.m.pool.ShardsOn(s), s, time.Now()) {
		l.core.Steps.Dirty = true
	}
}
