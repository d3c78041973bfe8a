package partition

import (
	"errors"
	"maps"
	"path"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
)

// This file keeps this member's record (<root>/owners/<member>): what we
// lead and what is reserved for us (loopgrace.go), our own reservation
// after a restart, and the deletion of the records of members absent for
// longer than the grace.

// noticeOwnRecord republishes our record when another writer replaced or
// deleted it (an operator, or a stale process with our member id): the
// other members would otherwise see our shards without a leader until our
// next change. The write succeeds only while we hold the member id.
func (l *loop) noticeOwnRecord(u update) {
	if u.Members == nil && u.Member == l.m.cfg.MemberID && (u.Rec == nil || u.Rec.Session != l.m.sess.ID()) {
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
		Buckets: !l.m.preBuckets, Migrate: !l.m.preBuckets,
	}
	for s := range l.grace.reserved {
		if _, led := l.leading[s]; !led {
			rec.Reserved = append(rec.Reserved, s)
		}
	}
	slices.Sort(rec.Reserved)
	rec.Unavailable = l.ownUnavailable()
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
	now := time.Now()
	for s := range rec.Leading {
		l.grace.reserveFor(s, now)
	}
	for _, s := range rec.Reserved {
		l.grace.reserveFor(s, now)
	}
	l.m.log.Info().Int("shards", len(l.grace.reserved)).Msg("restarted within grace: shards reserved")
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
	l.noteLease()
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
	for id, rec := range l.view.Records {
		if _, live := l.view.Members[id]; live {
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
		if v, issued := l.collecting[id]; (issued && v == rec.Version) || now.Sub(since) < l.m.cfg.RestartGrace {
			continue
		}
		l.collecting[id] = rec.Version
		l.background(func() {
			err := l.m.sess.Delete(l.base, path.Join(l.m.root, ownersDir, id), rec.Version)
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
