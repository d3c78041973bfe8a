package partition

import (
	"time"

	"github.com/zkelect/zkelect/partition/internal/member"
)

// This file is the loop's second stage (step, loop.go): it decides, from
// the view, which shards this member should lead.

// pace reports whether this step decides and reconciles (member.Steps.Pace);
// a step put off sets the wake timer for when it may run.
func (l *loop) pace() bool {
	run, wait := l.steps.Pace(time.Now())
	if wait > 0 {
		l.wakeIn(wait)
	}
	return run
}

// decide recomputes the assignment if the view or the member changed.
func (l *loop) decide() {
	if l.steps.Dirty {
		if l.steps.ViewNew {
			l.steps.ViewNew = false
			l.noteLeaders()
		}
		l.recompute()
	}
}

// recompute computes the assignment from the view: from what changed
// since the last step (loopassign.go). A shard some member publishes as
// unavailable makes the step build the whole map (member.DealUnavailable).
func (l *loop) recompute() {
	l.steps.Dirty = false
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
		l.targets, assigned = l.concerningUs(member.DealUnavailable(res.All(), in, byMember))
	} else {
		l.targets, assigned = l.concerningUsOf(res)
	}
	l.steps.Acted = l.steps.Acted || targetsMoved(prev, l.targets)
	l.noteOperatorMetrics(p.Frozen, assigned)
	if len(p.Pins) > 0 {
		l.clearMoves(p)
		l.expireMoves(p)
	}
	targets := l.targets
	l.m.target.Store(&targets)
	l.m.met.assignments.Inc()
	l.steps.Stale = true
	for s := range l.grace.Reserved() { // a reservation the balance gave elsewhere is void
		if targets[s] != l.m.cfg.MemberID {
			l.grace.Release(s)
			l.recordChanged, l.steps.Acted = true, true
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
