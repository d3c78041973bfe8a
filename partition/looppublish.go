package partition

import (
	"maps"
	"slices"
	"time"
)

// This file is the loop's last stage (step, loop.go): it publishes this
// member's record (records.go builds it) when it changed.

// publish queues the member's record if it changed and the publisher can
// take it (rootdata.Publisher.ReadyIn: one write at a time, a small
// batching delay apart); building it copies every leadership of the
// member.
func (l *loop) publish() {
	changed, since := l.leading.Changed()
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
	l.leading.TakeChange()
}

// checkPublished marks the record changed when the one last queued does
// not show what the record is now: whatever a step missed to mark, the
// record follows within a collect period (collectEvery), never stays
// wrong.
func (l *loop) checkPublished() {
	if changed, _ := l.leading.Changed(); changed || l.recordChanged || l.published == nil {
		return
	}
	now, pub := l.ownRecord(), l.published
	if now.Session != pub.Session || !maps.Equal(now.Leading, pub.Leading) ||
		!slices.Equal(now.Reserved, pub.Reserved) || !slices.Equal(now.Unavailable, pub.Unavailable) {
		l.m.log.Debug().Msg("member record out of date: published again")
		l.recordChanged = true
	}
}
