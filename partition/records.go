package partition

import (
	"errors"
	"maps"
	"path"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// This file keeps this member's record (<root>/owners/<member>) and the
// restart grace: what we lead and what is reserved for us, our own
// reservation after a restart or a session expiry, and the deletion of the
// records of members absent for longer than the grace.

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
// claim becomes a reservation for the restart grace (keepSuspended), as
// after an expiry: a record that showed the shard unclaimed while we are
// cut off, even for one write, would let the others' assignment deal it
// elsewhere for good.
//
// dropSuspended ends the claims suspended for longer than a session
// timeout.
func (l *loop) dropSuspended(now time.Time) {
	for s, since := range l.suspended {
		if now.Sub(since) > l.m.sess.Timeout() {
			l.keepSuspended(s, now, now.Add(l.m.cfg.RestartGrace))
		}
	}
}

// keepSuspended turns the suspended claim on shard s into a reservation
// until until (none when RestartGrace is negative or until is past).
func (l *loop) keepSuspended(s string, now, until time.Time) {
	delete(l.suspended, s)
	delete(l.leading, s)
	l.recordChanged = true
	if l.m.cfg.RestartGrace < 0 || !now.Before(until) {
		return
	}
	l.reserved[s] = true
	l.reservedUntil = until
}

// noticeSession reserves the shards assigned here when the session changes
// (the old one expired): this member comes back with new znodes, like a
// restart, and should get the same shards back within the restart grace.
// The grace counts from when the old session was lost (graceAfterLoss): a
// member cut off for longer, whose record the others deleted and whose
// shards they took over, comes back reserving nothing, as a member
// restarted after its grace does.
func (l *loop) noticeSession() {
	id := l.m.sess.ID()
	if id == 0 || id == l.session {
		return
	}
	now := time.Now()
	until := l.graceAfterLoss(now)
	for s := range l.suspended { // their znodes went with the old session
		l.keepSuspended(s, now, until)
	}
	l.expireReservation(now)
	if l.session != 0 && l.m.cfg.RestartGrace >= 0 && now.Before(until) {
		for s, m := range l.targets {
			if m == l.m.cfg.MemberID {
				l.reserved[s] = true
			}
		}
		l.reservedUntil = until
		l.recordChanged = true
		l.m.log.Info().Int64("session_id", id).Int("shards", len(l.reserved)).Msg("new session: shards reserved")
	}
	l.session = id
}

// graceAfterLoss returns when the restart grace of a session lost by now
// ends: RestartGrace after now, but no later than RestartGrace after the
// session could have expired, one session timeout after the loop last saw
// it connected (plus a collect period, how often it looks while nothing
// else happens). The others count the grace from the expiry.
func (l *loop) graceAfterLoss(now time.Time) time.Time {
	until := now.Add(l.m.cfg.RestartGrace)
	if l.connectedAt.IsZero() {
		return until
	}
	latest := l.connectedAt.Add(l.m.sess.Timeout() + l.collectEvery() + l.m.cfg.RestartGrace)
	if latest.Before(until) {
		return latest
	}
	return until
}

// noteConnected notes that the session we know is connected now (not
// its replacement, which noticeSession has not seen yet).
func (l *loop) noteConnected(now time.Time) {
	id := l.m.sess.ID()
	if id == l.session && l.m.sess.Connected() && l.m.sess.ID() == id {
		l.connectedAt = now
	}
}

// expireReservation ends our own reservation once its grace is over.
func (l *loop) expireReservation(now time.Time) {
	if len(l.reserved) > 0 && now.After(l.reservedUntil) {
		clear(l.reserved)
		l.recordChanged = true
	}
}

// reserveLost reserves a shard whose leadership a session expiry ended (a
// sibling session's, or the primary's), for the restart grace: its runner
// campaigns again on the session's replacement, and the reservation keeps
// the other members from dealing the shard elsewhere meanwhile, as after a
// restart. It extends the grace of earlier reservations.
func (l *loop) reserveLost(s string, reason error) {
	if l.m.cfg.RestartGrace < 0 || !errors.Is(reason, recipe.ErrSessionExpired) {
		return
	}
	l.reserved[s] = true
	l.reservedUntil = time.Now().Add(l.m.cfg.RestartGrace)
	l.recordChanged = true
}

// publish queues the member's record if it changed, at most once per
// publisher's gap (building it copies every leadership of the member).
func (l *loop) publish() {
	if !l.recordChanged && l.published != nil && l.published.Session == l.m.sess.ID() {
		return
	}
	if wait := l.pub.gap() - time.Since(l.lastPublish); wait > 0 {
		l.wakeIn(wait)
		return
	}
	rec := l.record()
	l.published, l.recordChanged, l.lastPublish = &rec, false, time.Now()
	l.pub.set(rec)
}

// noticeOwnRecord republishes our record when another writer replaced or
// deleted it (an operator, or a stale process with our member id): the
// other members would otherwise see our shards without a leader until our
// next change. The write succeeds only while we hold the member id.
func (l *loop) noticeOwnRecord(u update) {
	if u.members == nil && u.member == l.m.cfg.MemberID && (u.rec == nil || u.rec.Session != l.m.sess.ID()) {
		l.recordChanged = true
	}
}

// record is the member's record now, to publish.
func (l *loop) record() record {
	rec := l.ownRecord()
	rec.Leading = maps.Clone(rec.Leading)
	return rec
}

// ownRecord is the member's record now, sharing the loop's leadership map
// (read it only while the loop does not change it).
func (l *loop) ownRecord() record {
	rec := record{
		Session: l.m.sess.ID(), Leading: l.leading, ShardSet: l.m.currentShardSet(),
		Address: l.m.cfg.Address, Labels: l.m.cfg.Labels, Weight: l.m.cfg.Weight,
	}
	for s := range l.reserved {
		if _, led := l.leading[s]; !led {
			rec.Reserved = append(rec.Reserved, s)
		}
	}
	slices.Sort(rec.Reserved)
	return rec
}

// adoptOwnRecord reads the record an earlier session of this member left:
// its shards are reserved for us until the restart grace passes.
func (l *loop) adoptOwnRecord() {
	data, st, err := l.m.sess.Get(l.base, l.m.recordPath())
	if err != nil {
		return // none (or unreadable: we start without a reservation)
	}
	l.pub.read(st.Version)
	rec, err := decodeRecord(data)
	if err != nil || rec.Session == l.m.sess.ID() || l.m.cfg.RestartGrace < 0 {
		return
	}
	for s := range rec.Leading {
		l.reserved[s] = true
	}
	for _, s := range rec.Reserved {
		l.reserved[s] = true
	}
	l.reservedUntil = time.Now().Add(l.m.cfg.RestartGrace)
	l.m.log.Info().Int("shards", len(l.reserved)).Msg("restarted within grace: shards reserved")
}

// collectEvery is the period of collect.
func (l *loop) collectEvery() time.Duration {
	return min(max(l.m.cfg.RestartGrace/4, 50*time.Millisecond), time.Second)
}

// orphanedTTL bounds how long a shard whose leader left counts as orphaned
// for the failover metric: a takeover later than that is not measured.
const orphanedTTL = time.Minute

// collect deletes the records of members absent for longer than the
// restart grace (version-checked, so a member that came back and rewrote
// its record keeps it) and ends our own reservation when its grace is over.
func (l *loop) collect(now time.Time) {
	l.noteConnected(now)
	l.dropSuspended(now)
	for s, since := range l.orphaned { // taken over elsewhere, or never here
		if now.Sub(since) > orphanedTTL {
			delete(l.orphaned, s)
		}
	}
	l.expireReservation(now)
	if !l.selfLive() {
		return
	}
	for id, rec := range l.view.records {
		if _, live := l.view.members[id]; live {
			delete(l.absentSince, id)
			continue
		}
		since, seen := l.absentSince[id]
		if !seen {
			since = now
			l.absentSince[id] = now
			for s := range rec.Leading {
				if _, ours := l.leading[s]; !ours {
					l.orphaned[s] = now
				}
			}
		}
		if v, issued := l.collecting[id]; (issued && v == rec.version) || now.Sub(since) < l.m.cfg.RestartGrace {
			continue
		}
		l.collecting[id] = rec.version
		l.background(func() {
			err := l.m.sess.Delete(l.base, path.Join(l.m.root, ownersDir, id), rec.version)
			if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				l.m.log.Warn().Err(err).Str("absent_member", id).Msg("delete record after restart grace")
			}
		})
	}
}

// writeFinalRecord stores the shards we lead and those still reserved for
// us, as a reservation for our next session.
// finalRecord is the record a stopping member leaves: what it leads, no
// reservations.
func (l *loop) finalRecord() record {
	rec := l.record()
	for _, s := range rec.Reserved {
		rec.Leading[s] = 0
	}
	rec.Reserved = nil
	return rec
}
