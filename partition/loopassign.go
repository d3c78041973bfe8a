package partition

import (
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// This file feeds the loop's view into its assignment kept from changes
// (assign.Assigner): each step tells it only what changed since the last
// (our own record's delta, the holders the view's updates changed, the
// shard list when SetShards replaced it), so a step costs the change and
// our own share, not the whole shard list. Its targets are assign.Assign's
// for the input the view amounts to (input, loopoperator.go).

// assigning is the loop's assignment kept from changes; the first step
// sets it up (Track on the view: O(records) once).
type assigning struct {
	assigner *assign.Assigner
	listOf   []string // the shard list last given to SetShards
}

// assignment brings the assigner up to date with the view and computes
// the assignment.
func (l *loop) assignment(now time.Time) (*assign.Result, assign.Params) {
	a := &l.assigning
	if a.assigner == nil {
		a.assigner = assign.NewAssigner()
		l.view.Track()
	}
	l.view.SetOwn(&memberRecord{ID: l.m.cfg.MemberID, Record: l.ownRecord()})
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
