package member

import "time"

// This file begins a step of the member (Step): what time changed since
// the last (reservations, unseated shards and a freeze that ran out) and
// whether the step decides now (Steps.Pace); and, once it decided,
// whether it may reconcile the runners (ReconcileDue: the startup wait).

// Plan is what the core asks of the shell: of a step (Step, Decide,
// ReconcileDue, Reconcile), a runner's report (Report), a collect period
// (Collect) or a replaced session (NewSession). The shell carries every
// plan out in one place.
type Plan struct {
	// Decide: compute the assignment and reconcile the runners with it
	// (the state changed and the step gap is over).
	Decide bool
	// Reconcile (ReconcileDue): reconcile the runners with the
	// assignment now (they lag it, and the startup wait is over).
	Reconcile bool
	// RecordChanged: the record must be published again (beyond Leading's
	// own changes: a reservation or an unseated mark ended or began).
	RecordChanged bool
	// Start, Withdraw and Stop (Reconcile): the shards whose runner to
	// start, those whose runner to withdraw, and those whose runner to
	// stop (the shard removed from the list, or its election moving to
	// buckets: Concern.Skip), each sorted.
	Start, Withdraw, Stop []string
	// Computed (Decide): a new assignment was computed: hand its targets
	// (Assignment.Targets) to the runners; Assigned is how many shards it
	// targets here.
	Computed bool
	Assigned int
	// ClearMoves (Decide): the operator's moves to clear, by target.
	ClearMoves []MoveClear
	// DeleteRecords (Collect): the records of absent members to delete,
	// each at the version read (a member that came back and rewrote its
	// record keeps it).
	DeleteRecords []RecordVersion
	// Failover (Report) is the time from the shard's leader's member seen
	// gone to its leadership here (RunnerStarted of an orphaned shard), to
	// observe; zero when none.
	Failover time.Duration
	// HandoffDone (Report): a handoff ended with its runner (done), after
	// Handoff; HandoffDeferred: a handoff was given back (no successor):
	// counted, and the runner's request is no longer pending. Either way
	// the next queued handoff may start (Handoffs.Next).
	HandoffDone     bool
	Handoff         time.Duration
	HandoffDeferred bool
	// DeleteElection (Report): a removed shard whose runner finished:
	// delete its election's znode (the last member out does); "" for none.
	DeleteElection string
	// WakeIn: a step must run within it at the latest; zero: no wake.
	WakeIn time.Duration
}

// wake asks for a step within d at the latest.
func (p *Plan) wake(d time.Duration) {
	if d > 0 && (p.WakeIn == 0 || d < p.WakeIn) {
		p.WakeIn = d
	}
}

// Step begins a step at f.Now: it ends the reservations and unseated
// marks whose time is over (a record must not claim a shard past its
// reservation's deadline, when the others may deal it elsewhere), notes a
// freeze that lifted itself, and paces the step (Steps.Pace). It returns
// the plan, with a wake at the next deadline it knows.
func (c *Core[S]) Step(f Facts) Plan {
	var p Plan
	c.expire(f.Now, &p)
	if c.Freeze.Expired(f.Now) {
		c.Steps.Dirty = true
	}
	run, wait := c.Steps.Pace(f.Now)
	p.wake(wait)
	if !run {
		return p
	}
	p.Decide = true
	return p
}

// ReconcileDue is the second half of a step that decided: it plans a
// reconcile when the runners lag the assignment (Steps.Stale) and the
// startup wait is over at f.Now (Startup.Settled; f.ExpectedLive), and
// asks for a wake when the wait may end. The wait is looked at only once
// an assignment left the runners stale: the first needs the live members
// read, whose change starts the wait's settle time.
func (c *Core[S]) ReconcileDue(f Facts) Plan {
	var p Plan
	p.Reconcile = c.Steps.Stale && c.startupOver(f, &p)
	return p
}

// Expire ends the reservations and unseated marks whose time is over at
// now and returns what the shell must do (publish, wake).
func (c *Core[S]) Expire(now time.Time) Plan {
	var p Plan
	c.expire(now, &p)
	return p
}

func (c *Core[S]) expire(now time.Time, p *Plan) {
	if c.Grace.Expire(now) {
		p.RecordChanged, c.Steps.Dirty = true, true
	}
	if next, ok := c.Grace.NextExpiry(); ok {
		p.wake(max(next.Sub(now), time.Nanosecond))
	}
	changed, next := c.Unseated.Expire(now)
	if changed {
		p.RecordChanged, c.Steps.Dirty = true, true
	}
	if !next.IsZero() {
		p.wake(max(next.Sub(now), time.Nanosecond))
	}
}

// startupOver reports whether the startup wait is over (Startup.Settled),
// and asks for a wake when it may be.
func (c *Core[S]) startupOver(f Facts, p *Plan) bool {
	if c.Startup.Done() {
		return true
	}
	ok, wait := c.Startup.Settled(f.Now, c.settle, f.ExpectedLive)
	p.wake(wait)
	return ok
}

// And returns p and q as one plan, for the shell to carry out at once:
// the lists appended (p's first), the flags or'ed, the earlier wake; the
// fields one report or one assignment sets (Failover, the handoff's,
// DeleteElection, Assigned) are q's where q sets them.
func (p Plan) And(q Plan) Plan {
	p.Decide, p.Reconcile = p.Decide || q.Decide, p.Reconcile || q.Reconcile
	p.RecordChanged, p.Computed = p.RecordChanged || q.RecordChanged, p.Computed || q.Computed
	p.Start, p.Withdraw, p.Stop = append(p.Start, q.Start...), append(p.Withdraw, q.Withdraw...), append(p.Stop, q.Stop...)
	p.ClearMoves, p.DeleteRecords = append(p.ClearMoves, q.ClearMoves...), append(p.DeleteRecords, q.DeleteRecords...)
	if q.Computed {
		p.Assigned = q.Assigned
	}
	if q.Failover > 0 {
		p.Failover = q.Failover
	}
	if q.HandoffDone || q.HandoffDeferred {
		p.HandoffDone, p.Handoff, p.HandoffDeferred = q.HandoffDone, q.Handoff, q.HandoffDeferred
	}
	if q.DeleteElection != "" {
		p.DeleteElection = q.DeleteElection
	}
	p.wake(q.WakeIn)
	return p
}
