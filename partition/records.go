package partition

import (
	"maps"
	"slices"
	"time"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file keeps this member's record (<root>/owners/<member>): the copy
// of ownRecord (loopstate.go: what we lead and what is reserved for us) that
// we publish (through rootdata.Publisher), republishing it when another
// writer replaced it, our own reservation after a restart, and the final
// record a stop leaves; publish, the loop's last stage, writes it when it
// changed. The records of absent members are collected by collect
// (loopnotice.go).

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
		l.core.Grace.ReserveFor(s, now)
	}
	for _, s := range rec.Reserved {
		l.core.Grace.ReserveFor(s, now)
	}
	l.m.log.Info().Int("shards", l.core.Grace.NumReserved()).Msg("restarted within grace: shards reserved")
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

// publish is the loop's last stage (step, loop.go): it queues the member's record if it changed and the publisher can
// take it (rootdata.Publisher.ReadyIn: one write at a time, a small
// batching delay apart); building it copies every leadership of the
// member.
func (l *loop) publish() {
	changed, since := l.core.Leading.Changed()
	if !l.recordChanged && !changed && l.published != nil && l.published.Session == l.m.sess.ID() {
		return
	}
	switch wait := l.pub.ReadyIn(time.Now()); {
	case wait < 0:
		return // a write is under way: its end (pub.Idle) steps the loop again
	case wait > 0:
		l.wakeIn(wait)
		return
	}
	rec := l.record()
	l.pub.Set(rec, since)
	l.published, l.recordChanged = &rec, false
	l.core.Leading.TakeChange()
}

// checkPublished marks the record changed when the one last queued does
// not show what the record is now: whatever a step missed to mark, the
// record follows within a collect period (collectEvery), never stays
// wrong.
func (l *loop) checkPublished() {
	if changed, _ := l.core.Leading.Changed(); changed || l.recordChanged || l.published == nil {
		return
	}
	now, pub := l.ownRecord(), l.published
	if now.Session != pub.Session || !maps.Equal(now.Leading, pub.Leading) ||
		!slices.Equal(now.Reserved, pub.Reserved) || !slices.Equal(now.Unavailable, pub.Unavailable) {
		l.m.log.Debug().Msg("member record out of date: published again")
		l.recordChanged = true
	}
}
