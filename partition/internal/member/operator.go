package member

import (
	"maps"
	"slices"
	"time"
)

// This file is what the member decides of an operator's state: when a
// freeze it honoured lifts itself, and which moves to it are done.

// Freeze is the freeze the member's last assignment honoured.
type Freeze struct {
	until time.Time // when it lifts itself; zero: none honoured, or none that lifts itself
}

// Honoured notes the freeze of an assignment: frozen, until when (zero:
// until an operator lifts it). It returns when the member must step again
// for the freeze to lift itself (zero: no such time).
func (f *Freeze) Honoured(frozen bool, until time.Time) (wakeAt time.Time) {
	f.until = time.Time{}
	if frozen && !until.IsZero() {
		f.until = until
	}
	return f.until
}

// Expired reports whether the freeze the last assignment honoured has
// lifted itself by now: the assignment must be computed again.
func (f *Freeze) Expired(now time.Time) bool {
	return !f.until.IsZero() && !now.Before(f.until)
}

// DoneMoves returns the moves to member me that are done, sorted: me leads
// the shard (leads), its clearing is not under way (clearing), and the
// assignment without the move keeps the shard on me (targetWithout gives
// the target of a shard under other pins: assignPins, the operator's pins
// and moves as the assignment takes them, without the move; pins: the
// operator's pins alone). A move that is done is cleared so that it does
// not hold the shard on me for ever, like a pin.
func DoneMoves(me string, moves, pins, assignPins map[string]string, leads func(string) bool, clearing map[string]bool,
	targetWithout func(pins map[string]string, s string) string) []string {
	var done []string
	for s, to := range moves {
		if to != me || !leads(s) || clearing[s] {
			continue
		}
		without := maps.Clone(assignPins)
		if p, pinned := pins[s]; pinned {
			without[s] = p
		} else {
			delete(without, s)
		}
		if targetWithout(without, s) == me {
			done = append(done, s)
		}
	}
	slices.Sort(done)
	return done
}
