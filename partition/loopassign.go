package partition

import (
	"time"

	"github.com/zkelect/zkelect/partition/assign"
	"github.com/zkelect/zkelect/partition/internal/member"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file is the loop's second stage (step, loop.go), decide: it feeds
// the loop's view into its assignment kept from changes
// (assign.Assigner): each step tells it only what changed since the last
// (our own record's delta, the holders the view's updates changed, the
// shard list when SetShards replaced it), so a step costs the change and
// our own share, not the whole shard list. Its targets are assign.Assign's
// for the input the view amounts to (input, loopoperator.go).

// decide recomputes the assignment if the view or the member changed.
func (l *loop) decide() {
	if l.core.Steps.Dirty {
		if l.core.Steps.ViewNew {
			l.core.Steps.ViewNew = false
			l.noteLeaders()
		}
		l.recompute()
	}
}

// recompute computes the assignment from the view: from what changed
// since the last step (loopassign.go). A shard some member publishes as
// unavailable is dealt elsewhere (member.UnavailableMoves): that costs
// the unavailable shards, not the whole map.
func (l *loop) recompute() {
	l.core.Steps.Dirty = false
	if !l.selfLive() {
		return // our session is being replaced: keep everything as it is
	}
	if !l.view.OpRead {
		return // a drain or a freeze we have not read yet must not be acted against
	}
	res, p := l.assignment(time.Now()) // from what changed (loopassign.go)
	prev := l.targets
	var assigned int
	l.targets, assigned = l.concerningUsOf(res)
	if byMember := l.unavailableByMember(); len(byMember) > 0 {
		in := l.unavailableInput(p, byMember)
		count := make(map[string]int, len(p.Members))
		for _, m := range p.Members {
			count[m] = res.Count(m)
		}
		moved := member.UnavailableMoves(res.Target, count, in, byMember)
		assigned = withMoves(l.targets, assigned, moved, l.m.cfg.MemberID, func(s string) bool { return l.runners[s] != nil })
	}
	l.core.Steps.Acted = l.core.Steps.Acted || targetsMoved(prev, l.targets)
	l.noteOperatorMetrics(p.Frozen, assigned)
	if len(p.Pins) > 0 {
		l.clearMoves(p)
		l.expireMoves(p)
	}
	targets := l.targets
	l.sharedTargets.Store(&targets)
	l.m.met.assignments.Inc()
	l.core.Steps.Stale = true
	for s := range l.core.Grace.Reserved() { // a reservation the balance gave elsewhere is void
		if targets[s] != l.m.cfg.MemberID {
			l.core.Grace.Release(s)
			l.recordChanged, l.core.Steps.Acted = true, true
		}
	}
}

// assignment brings the assigner up to date with the view and computes
// the assignment.
func (l *loop) assignment(now time.Time) (*assign.Result, assign.Params) {
	a := &l.assigning
	if a.assigner == nil {
		a.assigner = assign.NewAssigner()
		l.view.Track()
	}
	l.view.SetOwn(&rootdata.MemberRecord{ID: l.m.cfg.MemberID, Record: l.ownRecord()})
	if shards := l.m.currentShards(); !sameSlice(shards, a.listOf) {
		a.listOf = shards
		a.assigner.SetShards(shards)
	}
	l.view.Changed(func(s, m string, tok uint64, held bool) {
		if held {
			a.assigner.Hold(s, m, tok)
		} else {
			a.assigner.Release(s)
		}
	})
	p := l.params(now)
	return a.assigner.Targets(p), p
}

// sameSlice reports whether x and y are the same slice (the shard list is
// replaced by SetShards, never changed in place).
func sameSlice(x, y []string) bool {
	return len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
}

// concerningUsOf is concerningUs for an assigner's result: the shards it
// targets to us (O(our share)) and the targets of those we run a runner
// for, and how many it targets to us.
func (l *loop) concerningUsOf(res *assign.Result) (map[string]string, int) {
	me := l.m.cfg.MemberID
	out := make(map[string]string, max(len(l.targets), len(l.runners)))
	n := 0
	res.Of(me, func(s string) bool {
		out[s] = me
		n++
		return true
	})
	for s, r := range l.runners {
		if _, ours := out[s]; !ours && r != nil {
			if m := res.Target(s); m != "" {
				out[s] = m
			}
		}
	}
	return out, n
}

// withMoves applies moved (shard → its new target) to targets, the
// shards targeted to me and those a runner runs for (runs) with their
// targets, of which assigned are targeted to me, and returns how many are
// targeted to me then: what concerningUs gives for the whole assignment
// with the moves applied.
func withMoves(targets map[string]string, assigned int, moved map[string]string, me string, runs func(string) bool) int {
	for s, to := range moved {
		was, had := targets[s]
		switch {
		case to == me:
			targets[s] = me
			if !had || was != me {
				assigned++
			}
			continue
		case had && was == me:
			assigned--
		}
		if runs(s) {
			targets[s] = to
		} else {
			delete(targets, s)
		}
	}
	return assigned
}

// unavailableInput is the part of the assignment's input member.DealUnavailable
// reads: the takers, the pins, and the holders of the shards some member
// cannot lead (byMember).
func (l *loop) unavailableInput(p assign.Params, byMember map[string][]string) assign.Input {
	in := assign.Input{Members: p.Members, Drained: p.Drained, Pins: p.Pins, Current: map[string]string{}}
	for _, shards := range byMember {
		for _, s := range shards {
			if h := l.assigning.assigner.Holder(s); h != "" {
				in.Current[s] = h
			}
		}
	}
	return in
}
