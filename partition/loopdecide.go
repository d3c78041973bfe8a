package partition

import (
	"time"
)

// This file paces the loop's steps (member.Steps decides) and keeps the
// helpers of its decide stage (loopassign.go): which targets changed, the
// part of the assignment that concerns this member, and the leaders handed
// to OnLeaderChanged.

// pace reports whether this step decides and reconciles (member.Steps.Pace);
// a step put off sets the wake timer for when it may run.
func (l *loop) pace() bool {
	run, wait := l.steps.Pace(time.Now())
	if wait > 0 {
		l.wakeIn(wait)
	}
	return run
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

// noteLeaders hands what changed in the leaders of the loop's view to
// OnLeaderChanged's notifier, if there is one.
func (l *loop) noteLeaders() {
	if l.leaders != nil {
		l.leaders.follow(l.view)
	}
}
