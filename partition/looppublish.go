package partition

import "time"

// This file is the loop's last stage (step, loop.go): it publishes this
// member's record (records.go builds it) when it changed.

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
