package partition

import (
	"maps"
	"time"
)

// This file keeps this member's record (<root>/owners/<member>): the copy
// of ownRecord (loopstate.go: what we lead and what is reserved for us) that
// we publish, republishing it when another writer replaced it, our own
// reservation after a restart, and the final record a stop leaves. The
// records of absent members are collected in collect.go.

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
		l.core.Grace.ReserveFor(s, now)
	}
	for _, s := range rec.Reserved {
		l.core.Grace.ReserveFor(s, now)
	}
	l.m.log.Info().Int("shards", l.core.Grace.NumReserved()).Msg("restarted within grace: shards reserved")
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
