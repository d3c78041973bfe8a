package member

import "time"

// This file is what the member decides when its session is replaced
// (NewSession).

// NewSession notes at now that the member's session was replaced (first:
// the run's first session, nothing was lost). The member comes back with
// new znodes, like a restart, and gets its shards back within the
// restart grace: its suspended claims become reservations (their znodes
// went with the old session), and the shards the latest assignment
// targets here are reserved. The grace counts from the old session's
// last lease deadline (Grace.AfterLoss), as the other members count it:
// a member cut off for longer, whose record the others deleted and whose
// shards they took over, reserves nothing, as a member restarted after
// its grace does. It returns how many shards it reserved for the targets
// and how long the grace has left (zero: nothing reserved, the grace is
// over or nothing was lost), with the plan.
func (c *Core[S]) NewSession(now time.Time, first bool) (reserved int, left time.Duration, p Plan) {
	until := c.Grace.AfterLoss(now)
	for _, s := range c.Grace.SuspendedLost(now, until) {
		c.Leading.End(s, now)
	}
	p = c.Expire(now)
	if first || !now.Before(until) {
		return 0, 0, p
	}
	for s, m := range c.Assign.targets {
		if m == c.me && c.Grace.Reserve(s, now, until) {
			reserved++
		}
	}
	p.RecordChanged = true
	return reserved, until.Sub(now), p
}
