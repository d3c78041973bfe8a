package member

import "time"

// This file plans the runners against the assignment (Reconcile): which
// shards get a runner, which runners withdraw, and which leaderships
// settle and queue for a handoff.

// Concern is what the shell knows of one shard that concerns the member
// (assigned here, or run here), for Reconcile.
type Concern struct {
	Shard  string
	Target string // the member the latest assignment targets it to
	Runner bool   // a runner of it runs here
	// Busy: its runner is stopping, or a handoff was asked of it and is
	// not over.
	Busy bool
	// Stopping: its runner was asked to stop (Plan.Stop, or the member
	// stopping).
	Stopping bool
	// Skip: it is not to be reconciled now (removed from the list, or its
	// election moving to buckets): its runner, if any, is stopped
	// (Plan.Stop).
	Skip bool
}

// Reconcile plans the runners against the targets at now: a stop of each
// runner of a shard not to be reconciled (Skip: removed from the list, or
// moving to buckets) not stopping yet (Stop); a runner for
// each shard assigned to me without one (Start); a withdrawal of each
// runner of a shard assigned elsewhere that does not lead it (Withdraw);
// and, for each shard led here and assigned elsewhere, a handoff queued
// (Handoffs, started by the shell through Handoffs.Next) once it has
// stayed so for settle (at once when drained: every assignment deals a
// drained member's shards elsewhere). concerns are sorted by shard. It
// marks the step as having acted (Steps.Acted) when it started, withdrew,
// queued more handoffs than the last step left waiting or began a
// settle, and clears Steps.Stale.
func (c *Core[S]) Reconcile(concerns []Concern, now time.Time, settle time.Duration, drained bool) Plan {
	var p Plan
	me := c.me
	c.Steps.Stale = false
	pending := c.Handoffs.Requeue()
	running := make(map[string]bool, len(concerns))
	for _, x := range concerns {
		running[x.Shard] = x.Runner
	}
	c.Handoffs.ForgetUnless(func(s string) bool { return running[s] })
	for _, x := range concerns {
		if x.Skip {
			if x.Runner && !x.Stopping && c.Assign.assigner != nil { // before the first assignment no list is known
				p.Stop = append(p.Stop, x.Shard)
			}
			continue
		}
		s, leading := x.Shard, c.Leading.Leads(x.Shard)
		if x.Target == me || !x.Runner || !leading {
			c.Handoffs.Forget(s)
		}
		switch {
		case x.Target == me && !x.Runner:
			p.Start = append(p.Start, s)
		case x.Target == me || !x.Runner || x.Busy:
		case !leading:
			p.Withdraw = append(p.Withdraw, s)
		default:
			ok, begun, wait := c.Handoffs.Settled(s, now, settle, drained)
			c.Steps.Acted = c.Steps.Acted || begun // a settle begun: the step that ends it must not wait long
			p.wake(wait)
			if ok {
				c.Handoffs.Queue(s)
			}
		}
	}
	c.Steps.Acted = c.Steps.Acted || len(p.Start) > 0 || len(p.Withdraw) > 0 || len(p.Stop) > 0 ||
		c.Handoffs.Queued() > pending // more due than the last step left waiting
	return p
}
