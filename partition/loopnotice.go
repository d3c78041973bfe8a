package partition

import (
	"time"

	"github.com/zkelect/zkelect/partition/internal/member"
)

// This file is the loop's first stage (step, loop.go): it feeds the core
// what the sessions changed since the last step, and gives the core the
// startup wait's facts (member.Core.ReconcileDue): reconcile
// starts no election until the membership settled, so members started
// together divide the shards without handing them on.

// notice feeds the core the session's replacement and lease
// (loopgrace.go) and the seats that cannot lead (loopliveness.go).
func (l *loop) notice() {
	l.noticeSession()
	l.noteLease()
	l.checkSeats(time.Now())
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
