package partition

import (
	"errors"
	"path"
	"time"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file collects the records (<root>/owners/<member>) of members
// absent for longer than the restart grace, and ages the loop's
// reservations, suspended leaderships and orphaned shards with them.

// collectEvery is the period of collect.
func (l *loop) collectEvery() time.Duration {
	return min(max(l.m.cfg.RestartGrace/4, 50*time.Millisecond), time.Second)
}

// collect deletes the records of members absent for longer than the
// restart grace (version-checked, so a member that came back and rewrote
// its record keeps it) and ends our own reservation when its grace is over.
func (l *loop) collect(now time.Time) {
	l.noteLease()
	l.dropSuspended(now)
	l.core.ExpireOrphans(now)
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
				l.core.Orphan(s, now)
			}
		}
		if v, issued := l.collecting[id]; (issued && v == rec.Version) || now.Sub(since) < l.m.cfg.RestartGrace {
			continue
		}
		l.collecting[id] = rec.Version
		l.background(func() {
			err := l.m.sess.Delete(l.base, path.Join(l.m.root, rootdata.OwnersDir, id), rec.Version)
			if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				l.m.log.Warn().Err(err).Str("absent_member", id).Msg("delete record after restart grace")
			}
		})
	}
}
