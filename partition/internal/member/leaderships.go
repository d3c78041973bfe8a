package member

import "time"

// This file keeps what the member leads, as its record shows it.

// Leaderships is what the member leads, each shard with its fencing token
// (a leadership a runner reported started, or one suspended by a lost
// connection that the record still claims: Grace). It is the record's
// claims, not the runners' shard.Held (what OnStartedLeading was handed):
// the two differ by the suspended claims and by when they change (see the
// package doc). Every change goes
// through Start or End, which mark the record to publish again and note
// when the first unpublished change came (the publish lag): no path can
// change what the member claims without the record following.
type Leaderships struct {
	led       map[string]uint64
	changed   bool
	changedAt time.Time
}

// NewLeaderships returns no leaderships.
func NewLeaderships() Leaderships { return Leaderships{led: map[string]uint64{}} }

// Start notes the leadership of shard s with token at now.
func (l *Leaderships) Start(s string, token uint64, now time.Time) {
	l.led[s] = token
	l.mark(now)
}

// End ends the claim on shard s at now (its leadership ended, its runner
// finished, a suspended claim dropped) and reports whether there was one;
// only then is the record marked.
func (l *Leaderships) End(s string, now time.Time) bool {
	if _, ok := l.led[s]; !ok {
		return false
	}
	delete(l.led, s)
	l.mark(now)
	return true
}

// Leads reports whether the member claims shard s.
func (l *Leaderships) Leads(s string) bool {
	_, ok := l.led[s]
	return ok
}

// Len returns how many shards the member claims.
func (l *Leaderships) Len() int { return len(l.led) }

// Map returns the claims, shard to token, for the record; the caller
// must not change it, and must copy it to keep it past the next change.
func (l *Leaderships) Map() map[string]uint64 { return l.led }

// Changed reports whether the claims changed since TakeChange, and the
// first change since.
func (l *Leaderships) Changed() (bool, time.Time) { return l.changed, l.changedAt }

// TakeChange forgets the changes: a record showing them was queued.
func (l *Leaderships) TakeChange() { l.changed, l.changedAt = false, time.Time{} }

func (l *Leaderships) mark(now time.Time) {
	if !l.changed {
		l.changed, l.changedAt = true, now
	}
}
