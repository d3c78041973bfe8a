package partition

import "time"

// This file keeps the startup wait: reconcile starts no election until the
// membership settled, so members started together divide the shards
// without handing them on.

// startupSettled reports whether the startup wait is over: ExpectedMembers
// members running our shard list are live (expectedMembersLive), or the live members have not changed for
// StartupSettle, or 4 x StartupSettle passed since the start. Until then,
// reconcile (which starts elections) waits and the loop wakes when the
// wait may end.
func (l *loop) startupSettled() bool {
	if l.startup.Done() {
		return true
	}
	n := l.m.cfg.ExpectedMembers
	ok, wait := l.startup.Settled(time.Now(), l.m.cfg.StartupSettle, n > 0 && l.selfLive() && l.expectedMembersLive(n))
	if wait > 0 {
		l.wakeIn(wait)
	}
	return ok
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
