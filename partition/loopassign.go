package partition

import (
	"maps"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
	"github.com/zkelect/zkelect/partition/internal/member"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file is the loop's second stage (step, loop.go), decide: it feeds
// the core's assignment kept from changes (member.Assignment) only what
// changed since the last step (our own record's delta, the holders the
// view's updates changed, the shard list when SetShards replaced it), so a
// step costs the change and our own share, not the whole shard list, and
// hands the core what it reads of the view (member.View); the core decides
// (member.Core.Decide); the loop carries out its plan (carryOutPlan).

// decide computes the assignment if the view or the member changed, and
// returns the core's plan.
func (l *loop) decide() member.Plan {
	if !l.core.Steps.Dirty {
		return member.Plan{}
	}
	if l.core.Steps.ViewNew {
		l.core.Steps.ViewNew = false
		l.noteLeaders()
	}
	now := time.Now()
	l.feedAssignment()
	return l.core.Decide(l.decideView(now), now)
}

// feedAssignment tells the core's assignment what changed in the view
// since the last step; the first step sets it up (Track on the view:
// O(records) once).
func (l *loop) feedAssignment() {
	a := &l.core.Assign
	if a.Begin() {
		l.view.Track()
	}
	l.view.SetOwn(&rootdata.MemberRecord{ID: l.m.cfg.MemberID, Record: l.ownRecord()})
	a.SetShards(l.m.currentShards())
	l.view.Changed(func(s, m string, tok uint64, held bool) {
		if held {
			a.Hold(s, m, tok)
		} else {
			a.Release(s)
		}
	})
}

// decideView is what the core's Decide reads of the view at now: the
// assignment's input (params), the shards members publish as unavailable,
// the operator's moves and pins, and the runners.
func (l *loop) decideView(now time.Time) member.View {
	op := l.view.Operator.OperatorState
	p := l.params(now)
	v := member.View{
		SelfLive: l.selfLive(), OpRead: l.view.OpRead, Params: p,
		Unavailable: l.unavailableByMember(),
		Moves:       op.Moves, Pins: op.Pins,
		VoidMove: func(s string) bool { return op.VoidMove(s, l.view.Members) },
		Runs:     func(s string) bool { return l.runners[s] != nil },
		Running:  maps.Keys(l.runners),
	}
	if p.Frozen && op.Freeze != nil {
		v.FreezeUntil = op.Freeze.Until
	}
	return v
}

// params is the part of the assignment's input that is not per shard:
// the live members that run our shard list, their weights and the
// operator's state; the holders come from the view (feedAssignment), our
// own claims from the loop, not from our record as read back: the record
// lags them by a publish, and is missing for a moment when the others
// deleted it while our session was replaced late in our restart grace.
// An assignment from it would void our reservations. The same at every
// member that sees the same znodes, the freeze's expiry aside (each
// member reads its own clock).
func (l *loop) params(now time.Time) assign.Params {
	op := l.view.Operator.OperatorState
	members := l.sameListMembers()
	p := assign.Params{Members: members, Drained: op.DrainedList(), Pins: op.AssignPins(), Frozen: op.Frozen(now)}
	for _, id := range members {
		if w := l.weight(id); w != 1 {
			if p.Weights == nil {
				p.Weights = map[string]int{}
			}
			p.Weights[id] = w
		}
	}
	return p
}

// unavailableByMember returns the shards each live member of the view
// (this one included) publishes as unavailable, for the core's Decide.
func (l *loop) unavailableByMember() map[string][]string {
	out := map[string][]string{}
	if own := l.core.Unavailable(); len(own) > 0 {
		out[l.m.cfg.MemberID] = own
	}
	for id, rec := range l.view.Records {
		if id != l.m.cfg.MemberID && len(rec.Unavailable) > 0 && rec.Session == l.view.Members[id] {
			out[id] = rec.Unavailable
		}
	}
	return out
}

// noteLeaders hands what changed in the leaders of the loop's view to
// OnLeaderChanged's notifier, if there is one.
func (l *loop) noteLeaders() {
	if l.leaders != nil {
		l.leaders.follow(l.view)
	}
}
