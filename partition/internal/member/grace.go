package member

import (
	"iter"
	"maps"
	"slices"
	"time"
)

// Grace is the member's restart grace, as the loop keeps it: the shards
// Reserved for it (led by an earlier session of the member, or lost with a
// session that expired) each with its own deadline, and the leaderships
// Suspended by a lost connection that the record still claims (see
// holdSuspended), each since when. It also keeps the lease of the session
// the loop knows, so that the grace after that session's loss counts from
// where the other members count theirs (afterLoss). Its methods take the
// time as an argument and touch no session; only the loop goroutine calls
// them.
type Grace struct {
	// period is Config.RestartGrace; negative: nothing is ever reserved.
	period time.Duration
	// Reserved maps each reserved shard to the instant its reservation
	// ends. One deadline per shard: a later loss never extends an
	// earlier reservation.
	reserved map[string]time.Time
	// Suspended maps each suspended leadership to when it was suspended.
	suspended map[string]time.Time
	// lease is the latest lease deadline seen of the session the loop
	// knows (the instant before which ZooKeeper cannot have expired it);
	// zero before any.
	lease time.Time
}

// NewGrace returns an empty Grace of period (Config.RestartGrace).
func NewGrace(period time.Duration) Grace {
	return Grace{period: period, reserved: map[string]time.Time{}, suspended: map[string]time.Time{}}
}

// Reserve reserves shard s until until, unless reservations are off or
// until is not after now. A shard already reserved keeps the later of its
// two deadlines. It reports whether s is reserved now.
func (g *Grace) Reserve(s string, now, until time.Time) bool {
	if g.period < 0 || !now.Before(until) {
		return false
	}
	if old, ok := g.reserved[s]; !ok || until.After(old) {
		g.reserved[s] = until
	}
	return true
}

// ReserveFor reserves shard s for the whole period from now (a
// leadership lost now, an earlier session's record read now).
func (g *Grace) ReserveFor(s string, now time.Time) bool {
	return g.Reserve(s, now, now.Add(g.period))
}

// Release ends the reservation of shard s (led again, or dealt
// elsewhere); false if it had none.
func (g *Grace) Release(s string) bool {
	_, ok := g.reserved[s]
	delete(g.reserved, s)
	return ok
}

// IsReserved reports whether shard s is reserved.
func (g *Grace) IsReserved(s string) bool {
	_, ok := g.reserved[s]
	return ok
}

// Expire ends the reservations whose deadline is not after now and
// reports whether any ended.
func (g *Grace) Expire(now time.Time) bool {
	n := len(g.reserved)
	for s, until := range g.reserved {
		if !now.Before(until) {
			delete(g.reserved, s)
		}
	}
	return len(g.reserved) != n
}

// NextExpiry returns the earliest reservation deadline; false when none.
func (g *Grace) NextExpiry() (time.Time, bool) {
	var first time.Time
	for _, until := range g.reserved {
		if first.IsZero() || until.Before(first) {
			first = until
		}
	}
	return first, !first.IsZero()
}

// CapAt ends every reservation at until at the latest.
func (g *Grace) CapAt(until time.Time) {
	for s, u := range g.reserved {
		if u.After(until) {
			g.reserved[s] = until
		}
	}
}

// IsSuspended reports whether the leadership of shard s is suspended.
func (g *Grace) IsSuspended(s string) bool {
	_, ok := g.suspended[s]
	return ok
}

// Suspend notes that the leadership of shard s was suspended at now.
func (g *Grace) Suspend(s string, now time.Time) { g.suspended[s] = now }

// Resume forgets the suspension of shard s (led again, or over).
func (g *Grace) Resume(s string) { delete(g.suspended, s) }

// DropSuspended ends the suspensions older than timeout (by then the
// session may have expired and the candidate's znode gone): each becomes
// a reservation for the period from now. It returns the shards whose
// suspension ended, sorted, for the loop to stop claiming as led.
func (g *Grace) DropSuspended(now time.Time, timeout time.Duration) []string {
	var out []string
	for s, since := range g.suspended {
		if now.Sub(since) > timeout {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	for _, s := range out {
		delete(g.suspended, s)
		g.ReserveFor(s, now)
	}
	return out
}

// NoteLease notes a lease deadline of the session the loop knows: the
// instant before which ZooKeeper cannot have expired it. The latest one
// noted counts.
func (g *Grace) NoteLease(deadline time.Time) {
	if deadline.After(g.lease) {
		g.lease = deadline
	}
}

// AfterLoss returns when the grace of the session the loop knew, found
// lost at now, ends, ends every reservation by then at the latest (those
// made for leaderships lost while the session was cut off included: the
// others count the grace of all of them from the session's expiry), and
// forgets that session's lease (the next session's is noted afresh). The others count their grace from when they see the
// session's member znode gone, which is no earlier than its expiry, which
// is no earlier than the last lease deadline noted: so the grace ends at
// the period after that deadline, or after now if that is earlier (with
// no lease noted). A member cut off for longer than its session and grace
// therefore finds its grace over when it comes back, as the others, who
// deleted its record and dealt its shards elsewhere by then, do.
func (g *Grace) AfterLoss(now time.Time) time.Time {
	until := now.Add(g.period)
	if !g.lease.IsZero() && g.lease.Add(g.period).Before(until) {
		until = g.lease.Add(g.period)
	}
	g.lease = time.Time{}
	g.CapAt(until)
	return until
}

// SuspendedLost turns every suspended leadership into a reservation until
// until (the session that held their znodes was lost), and returns those
// shards, sorted.
func (g *Grace) SuspendedLost(now, until time.Time) []string {
	out := slices.Sorted(maps.Keys(g.suspended))
	for _, s := range out {
		delete(g.suspended, s)
		g.Reserve(s, now, until)
	}
	return out
}

// Reserved returns the reserved shards, in no order.
func (g *Grace) Reserved() iter.Seq[string] { return maps.Keys(g.reserved) }

// NumReserved returns how many shards are reserved.
func (g *Grace) NumReserved() int { return len(g.reserved) }
