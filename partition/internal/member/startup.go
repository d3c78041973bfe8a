package member

import "time"

// This file keeps the startup wait: no election starts until the
// membership settled, so members started together divide the shards
// without handing them on.

// StartupSettleCap bounds the whole startup wait, in multiples of the
// settle time (partition's Config.StartupSettle).
const StartupSettleCap = 4

// Startup is the startup wait of one run: when it began, when the live
// members last changed, and whether it is over (for good once it is).
type Startup struct {
	started   time.Time
	membersAt time.Time
	done      bool
}

// NewStartup returns the startup wait of a run started at now.
func NewStartup(now time.Time) Startup { return Startup{started: now} }

// MembersChanged notes that the set of live members changed at now; it
// reports whether the wait was over already (a change then is acted on
// at once: Steps.Urgent).
func (s *Startup) MembersChanged(now time.Time) (done bool) {
	s.membersAt = now
	return s.done
}

// Done reports whether the startup wait is over.
func (s *Startup) Done() bool { return s.done }

// Settled reports whether the startup wait is over at now, for a settle
// time settle (negative: no wait): expectedLive (the expected members
// running our shard list are live), or the live members have not changed
// for settle, or StartupSettleCap x settle passed since the start. While
// it is not, wait is how long until it may be (nothing else changing).
func (s *Startup) Settled(now time.Time, settle time.Duration, expectedLive bool) (ok bool, wait time.Duration) {
	if s.done || settle < 0 || expectedLive {
		s.done = true
		return true, 0
	}
	until := s.membersAt.Add(settle)
	if limit := s.started.Add(StartupSettleCap * settle); limit.Before(until) {
		until = limit
	}
	if wait := until.Sub(now); wait > 0 {
		return false, wait
	}
	s.done = true
	return true, 0
}
