package partition

import (
	"maps"
	"time"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file keeps this member's record (<root>/owners/<member>): the copy
// of ownRecord (loopstate.go: what we lead and what is reserved for us) that
// we publish (through rootdata.Publisher), republishing it when another
// writer replaced it, our own reservation after a restart, and the final
// record a stop leaves. The records of absent members are collected in
// collect.go.

// newPublisher returns the writer of this member's record: overwriting
// another writer's only while this Manager holds the member id, measured
// on the member's metrics.
func (m *Manager) newPublisher() *rootdata.Publisher {
	return rootdata.NewPublisher(rootdata.PublisherConfig{
		Session: m.sess, Path: m.recordPath(), ACL: m.cfg.ACL, Registered: m.holdsID,
		Lag:    func(d time.Duration) { m.met.publishLag.Observe(d.Seconds()) },
		Failed: m.met.recordFailures.Inc,
		Log:    m.log,
	})
}

// noticeOwnRecord republishes our record when another writer replaced or
// deleted it (an operator, or a stale process with our member id): the
// other members would otherwise see our shards without a leader until our
// next change. The write succeeds only while we hold the member id.
func (l *loop) noticeOwnRecord(u rootdata.Update) {
	if u.Members == nil && u.Member == l.m.cfg.MemberID && (u.Rec == nil || u.Rec.Session != l.m.sess.ID()) {
		l.recordChanged = true
	}
}

// record is the member's record now, to publish.
func (l *loop) record() rootdata.Record {
	rec := l.ownRecord()
	rec.Leading = maps.Clone(rec.Leading)
	return rec
}

// adoptOwnRecord reads the record an earlier session of this member left:
// its shards are reserved for us until the restart grace passes.
func (l *loop) adoptOwnRecord() {
	rec := l.pub.Adopt(l.base) // nil: none, or unreadable (we start without a reservation)
	if rec == nil || rec.Session == l.m.sess.ID() || l.m.cfg.RestartGrace < 0 {
		return
	}
	now := time.Now()
	for s := range rec.Leading {
		l.grace.ReserveFor(s, now)
	}
	for _, s := range rec.Reserved {
		l.grace.ReserveFor(s, now)
	}
	l.m.log.Info().Int("shards", l.grace.NumReserved()).Msg("restarted within grace: shards reserved")
}

// finalRecord is the record a stopping member leaves: the shards it leads
// and those still reserved for it, as what it leads (a reservation for
// its next session), and no reservations.
func (l *loop) finalRecord() rootdata.Record {
	rec := l.record()
	for _, s := range rec.Reserved {
		rec.Leading[s] = 0
	}
	rec.Reserved = nil
	return rec
}
