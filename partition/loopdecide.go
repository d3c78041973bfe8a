package partition

import "time"

// This file is the loop's second stage (step, loop.go): it decides, from
// the view, which shards this member should lead.

// minStep spaces out the loop's steps: computing the assignment and
// walking every shard costs milliseconds at 10,000 shards, and during a
// cold start records and runners change hundreds of times a second. A step
// also waits stepCostFactor times as long as the previous one took, so the
// loop spends at most a tenth of its time on them, but never more than
// maxStepGap: the wait follows wall time, and one step slowed by the
// machine (a garbage collection of a large heap, the CPU shared with
// other work) put the next off by ten times as long. At 40,000 shards
// members acted on a join 49 s and 113 s after it, one after another, and
// handed off in about a second each once they did.
const (
	minStep        = 20 * time.Millisecond
	maxStepGap     = time.Second
	stepCostFactor = 10
)

// pace reports whether this step decides and reconciles: only when the
// state changed (dirty) or the runners lag the assignment (stale), and at
// most once per stepGap; a step put off sets the wake timer for it.
func (l *loop) pace() bool {
	if !l.dirty && !l.stale {
		return false
	}
	if wait := l.stepGap - time.Since(l.lastStep); wait > 0 {
		l.wakeIn(wait)
		return false
	}
	l.lastStep = time.Now()
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

// recompute computes the assignment from the view.
func (l *loop) recompute() {
	l.dirty = false
	if !l.selfLive() {
		return // our session is being replaced: keep everything as it is
	}
	if !l.view.OpRead {
		return // a drain or a freeze we have not read yet must not be acted against
	}
	in := l.input(time.Now())
	all := dealUnavailable(Assign(in), in, l.unavailableByMember())
	l.noteOperatorMetrics(in, all)
	l.targets = l.concerningUs(all)
	if len(in.Pins) > 0 {
		l.clearMoves(in)
		l.expireMoves(in)
	}
	targets := l.targets
	l.m.target.Store(&targets)
	l.m.met.assignments.Inc()
	l.stale = true
	for s := range l.grace.reserved { // a reservation the balance gave elsewhere is void
		if targets[s] != l.m.cfg.MemberID {
			l.grace.release(s)
			l.recordChanged = true
		}
	}
}

// concerningUs returns the part of an assignment this member acts on: the
// shards it targets to us, and those we run a runner for (to withdraw or
// hand off). The rest, most of the shards among several members, need not
// be held: a shard without a runner here that is not ours is left alone.
func (l *loop) concerningUs(all map[string]string) map[string]string {
	me, n := l.m.cfg.MemberID, len(l.runners)
	for _, m := range all {
		if m == me {
			n++
		}
	}
	out := make(map[string]string, n)
	for s, m := range all {
		if m == me || l.runners[s] != nil {
			out[s] = m
		}
	}
	return out
}

// noteLeaders hands the leaders of the loop's view to OnLeaderChanged's
// notifier, if there is one.
func (l *loop) noteLeaders() {
	if l.leaders != nil {
		l.leaders.set(l.view.Leaders())
	}
}
