package partition

import (
	"errors"
	"path"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition/internal/member"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file feeds the core the other members' records each collect period
// (member.Core.Collect decides which to collect, and ages the loop's
// reservations, suspended leaderships and orphaned shards with them), and
// deletes the records it plans to.

// collectEvery is the period of collect.
func (l *loop) collectEvery() time.Duration {
	return min(max(l.m.cfg.RestartGrace/4, 50*time.Millisecond), time.Second)
}

// collect is the collect period's tick at now (member.Core.Collect).
func (l *loop) collect(now time.Time) {
	l.noteLease()
	var recs []member.Record
	if l.selfLive() {
		recs = make([]member.Record, 0, len(l.view.Records))
		for id, rec := range l.view.Records {
			_, live := l.view.Members[id]
			recs = append(recs, member.Record{ID: id, Version: rec.Version, Live: live, Leading: rec.Leading})
		}
	}
	l.carryOutPlan(l.core.Collect(l.facts(now), l.selfLive(), recs))
}

// deleteRecord deletes the record of an absent member at the version the
// core planned (version-checked, so a member that came back and rewrote
// its record keeps it).
func (l *loop) deleteRecord(r member.RecordVersion) {
	l.background(func() {
		err := l.m.sess.Delete(l.base, path.Join(l.m.root, rootdata.OwnersDir, r.ID), r.Version)
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			l.m.log.Warn().Err(err).Str("absent_member", r.ID).Msg("delete record after restart grace")
		}
	})
}
