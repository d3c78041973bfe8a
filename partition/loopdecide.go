package partition

import (
	"slices"
	"time"
)

// This file is the loop's second stage (step, loop.go): it decides, from
// the view, which shards this member should lead.

// minStep spaces out the loop's steps: computing the assignment and
// walking every shard costs milliseconds at 10,000 shards and a few
// hundred at 100,000, and during a cold start or a join records and
// runners change many times a second. A step also waits stepCostFactor
// times the typical cost of the recent ones (the median of the last
// stepCostWindow: steps of every member of a process share its cores, so
// members whose steps cost much step less often and the machine is not
// saturated by them), but never more than maxStepGap. One step slowed by
// the machine (a garbage collection of a large heap, the CPU shared with
// other work) does not count: it used to put the next off by ten times
// as long. At 40,000 shards members then acted on a join 49 s and 113 s
// after it, one after another. With every gap capped at 1 s instead, at
// 100,000 shards six members in one process (their steps of a few hundred
// milliseconds each) took 150% of two cores during a join, and the fleet
// was not balanced after 6 minutes.
//
// Steps that change nothing space out further: each one in a row doubles
// the gap, up to maxQuietDoublings times (and maxStepGap). During a drain
// or a join every handoff changes a record, so every member's view, and
// each member recomputed the same assignment about once a second: at
// 100,000 shards those steps took the CPU the handoffs needed (a drain's
// handoffs ran at 150-500 a second while the five members stepped, at
// 1,400-1,900 between their steps). A step that acts (a shard given a new
// target, a runner started, withdrawn or queued for a handoff, a settle
// begun) brings the gap back to its cost's. A step something is waiting
// for (a settle or a freeze ending, a runner to restart: due) waits the
// gap of its cost, not the doubled one; an operator's change and a change
// of the live members wait minStep (urgent: pace).
const (
	minStep           = 20 * time.Millisecond
	maxStepGap        = 5 * time.Second
	stepCostFactor    = 10
	maxQuietDoublings = 3
)

// noteStepCost records the cost of the step that just ran and whether it
// acted, and sets the gap before the next one: stepCostFactor times the
// median of the last stepCostWindow costs (baseGap), doubled for each
// step in a row (up to maxQuietDoublings) that did not act, within
// [minStep, maxStepGap].
func (s *stepState) noteStepCost(cost time.Duration, acted bool) {
	s.costs[s.costAt%stepCostWindow] = cost
	s.costAt++
	if acted {
		s.quiet = 0
	} else {
		s.quiet = min(s.quiet+1, maxQuietDoublings)
	}
	recent := s.costs
	n := min(s.costAt, stepCostWindow)
	slices.Sort(recent[:n])
	s.baseGap = min(max(minStep, stepCostFactor*recent[(n-1)/2]), maxStepGap)
	s.stepGap = min(s.baseGap<<s.quiet, maxStepGap)
}

// pace reports whether this step decides and reconciles: only when the
// state changed (dirty) or the runners lag the assignment (stale), and at
// most once per stepGap, or minStep after an operator's change or a change
// of the live members (urgent: a drain, a move, a freeze, a crash or a
// join is acted on at once, not a step gap of seconds later at 100,000
// shards; those come a few a minute, not the many a second members'
// records change); a step something waits for (due) waits baseGap, not
// the quiet steps' longer gap; a step put off sets the wake timer for it.
func (l *loop) pace() bool {
	if !l.dirty && !l.stale {
		return false
	}
	gap := l.stepGap
	switch {
	case l.urgent:
		gap = minStep
	case l.due:
		gap = l.baseGap
	}
	if wait := gap - time.Since(l.lastStep); wait > 0 {
		l.wakeIn(wait)
		return false
	}
	if l.urgent {
		l.quiet = 0
	}
	l.lastStep, l.urgent, l.due = time.Now(), false, false
	return true
}

// decide recomputes the assignment if the view or the member changed.
func (l *loop) decide() {
	if l.dirty {
		if l.viewNew {
			l.viewNew = false
			l.noteLeaders()
		}
		l.recompute()
	}
}

// recompute computes the assignment from the view: from what changed
// since the last step (loopassign.go). A shard some member publishes as
// unavailable makes the step build the whole map (dealUnavailable).
func (l *loop) recompute() {
	l.dirty = false
	if !l.selfLive() {
		return // our session is being replaced: keep everything as it is
	}
	if !l.view.OpRead {
		return // a drain or a freeze we have not read yet must not be acted against
	}
	res, p := l.assignment(time.Now()) // from what changed (loopassign.go)
	prev := l.targets
	var assigned int
	if byMember := l.unavailableByMember(); len(byMember) > 0 {
		in := l.unavailableInput(p, byMember)
		l.targets, assigned = l.concerningUs(dealUnavailable(res.All(), in, byMember))
	} else {
		l.targets, assigned = l.concerningUsOf(res)
	}
	l.acted = l.acted || targetsMoved(prev, l.targets)
	l.noteOperatorMetrics(p.Frozen, assigned)
	if len(p.Pins) > 0 {
		l.clearMoves(p)
		l.expireMoves(p)
	}
	targets := l.targets
	l.m.target.Store(&targets)
	l.m.met.assignments.Inc()
	l.stale = true
	for s := range l.grace.reserved { // a reservation the balance gave elsewhere is void
		if targets[s] != l.m.cfg.MemberID {
			l.grace.release(s)
			l.recordChanged, l.acted = true, true
		}
	}
}

// targetsMoved reports whether next gives some shard a target prev did
// not: a shard that only dropped out (its runner here finished, a handoff
// done) asks nothing of this member.
func targetsMoved(prev, next map[string]string) bool {
	for s, m := range next {
		if was, ok := prev[s]; !ok || was != m {
			return true
		}
	}
	return false
}

// concerningUs returns the part of an assignment this member acts on: the
// shards it targets to us, and those we run a runner for (to withdraw or
// hand off), and how many it targets to us. The rest, most of the shards
// among several members, need not be held: a shard without a runner here
// that is not ours is left alone. One pass over all: at 100,000 shards
// each pass costs milliseconds of every member's step.
func (l *loop) concerningUs(all map[string]string) (map[string]string, int) {
	me := l.m.cfg.MemberID
	out := make(map[string]string, max(len(l.targets), len(l.runners)))
	n := 0
	for s, m := range all {
		switch {
		case m == me:
			n++
			out[s] = m
		case l.runners[s] != nil:
			out[s] = m
		}
	}
	return out, n
}

// noteLeaders hands the leaders of the loop's view to OnLeaderChanged's
// notifier, if there is one.
func (l *loop) noteLeaders() {
	if l.leaders != nil {
		l.leaders.set(l.view.Leaders())
	}
}
