package member

import "time"

// This file is what the core decides of a runner's report (Report): the
// shell translates each of partition/internal/shard's Events into an
// Event and carries out the Plan it returns.

// EventKind says what a shard's runner reported.
type EventKind uint8

// The kinds of Event, as partition/internal/shard reports them.
const (
	RunnerStarted   EventKind = iota + 1 // leadership accepted, OnStartedLeading called
	RunnerStopped                        // leadership over, OnStoppedLeading returned
	RunnerSuspended                      // leadership over for a lost connection; campaigning on
	RunnerUnseated                       // no session could be opened for its election
	RunnerDeferred                       // a handoff found no successor campaigning: still leading
	RunnerFinished                       // runner returned; its candidate is closed
)

// Event is one runner's report, with what the shell knows of the runner.
type Event struct {
	Shard string
	Kind  EventKind
	Token uint64 // RunnerStarted: the leadership's token
	// Expired (RunnerStopped): the leadership ended with its session's
	// expiry (recipe.ErrSessionExpired): its runner campaigns again on the
	// session's replacement, and the shard is reserved meanwhile.
	Expired bool
	// Handoff (RunnerDeferred, RunnerFinished): a handoff was asked of the
	// runner, at AskedAt, and counts against the throttle.
	Handoff bool
	AskedAt time.Time
	// Removed (RunnerFinished): the runner was stopped because its shard
	// was removed from the list.
	Removed bool
}

// UnseatedFor is how long a shard whose election found no session counts
// as unavailable, in session timeouts, before the member tries again.
const UnseatedFor = 4

// Report feeds a runner's event at f.Now and returns what the shell must
// do. What the next step must look at it notes in Steps: the assignment
// again (Dirty: a shard unseated), the runners (Stale: a runner finished,
// a handoff or withdrawal dropped), soon (Due: a runner of a shard still
// assigned here finished and must start again).
func (c *Core[S]) Report(ev Event, f Facts) Plan {
	var eff Plan
	s, now := ev.Shard, f.Now
	switch ev.Kind {
	case RunnerStarted:
		c.Leading.Start(s, ev.Token, now)
		c.Grace.Resume(s)
		c.Grace.Release(s)
		delete(c.Unavail, s) // led after all: available
		delete(c.Unseated, s)
		if since, ok := c.orphaned[s]; ok {
			eff.Failover = max(now.Sub(since), time.Nanosecond)
			delete(c.orphaned, s)
		}
	case RunnerStopped:
		c.Leading.End(s, now)
		c.Grace.Resume(s)
		eff.RecordChanged = c.reserveLost(s, ev.Expired, now)
	case RunnerSuspended:
		if c.Leading.Leads(s) {
			c.Grace.Suspend(s, now)
		}
	case RunnerUnseated:
		c.unseated(s, f, &eff)
	case RunnerDeferred:
		if ev.Handoff {
			c.Handoffs.Ended(s, now, true) // try again once settled again
			eff.HandoffDeferred = true
		}
		c.Steps.Stale = true // a withdrawal dropped: handed off once settled
	case RunnerFinished:
		c.finished(ev, now, &eff)
	}
	return eff
}

// finished is Report of RunnerFinished.
func (c *Core[S]) finished(ev Event, now time.Time, eff *Plan) {
	s := ev.Shard
	c.Leading.End(s, now) // a suspended leadership the record claims, withdrawn
	c.Grace.Resume(s)
	c.Handoffs.Forget(s)
	if ev.Handoff {
		c.Handoffs.Ended(s, now, false)
		eff.HandoffDone, eff.Handoff = true, max(now.Sub(ev.AskedAt), 0)
	}
	if ev.Removed {
		eff.DeleteElection = s
	}
	c.Steps.Stale = true
	c.Steps.Due = c.Steps.Due || c.Assign.Target(s) == c.me // ours still: started again
}

// reserveLost reserves shard s, whose leadership a session expiry ended
// (expired; a sibling session's, or the primary's), for the restart grace
// from now: its runner campaigns again on the session's replacement, and
// the reservation keeps the other members from dealing the shard
// elsewhere meanwhile, as after a restart. Each reservation has its own
// deadline: a later loss does not extend an earlier one. A shard marked
// unavailable is dealt to another member: nothing is kept for us. It
// reports whether it reserved s.
func (c *Core[S]) reserveLost(s string, expired bool, now time.Time) bool {
	if _, out := c.Unavail[s]; out || !expired {
		return false
	}
	return c.Grace.ReserveFor(s, now)
}

// unseated marks shard s, whose runner could not place its election on a
// session, unavailable for UnseatedFor session timeouts from now, and
// ends our claims on it; a shard led here is left alone.
func (c *Core[S]) unseated(s string, f Facts, eff *Plan) {
	if c.Leading.Leads(s) {
		return
	}
	d := UnseatedFor * f.SessionTimeout
	c.Unseated.Mark(s, f.Now.Add(d))
	c.Grace.Release(s)
	c.Steps.Dirty = true
	eff.RecordChanged, eff.WakeIn = true, d
}
