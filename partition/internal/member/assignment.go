package member

import (
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// This file is the member's decide stage (Decide): the assignment kept
// from changes (assign.Assigner, fed by the shell with what the view
// changed), the targets the member acts on, the shards some member cannot
// lead dealt elsewhere (UnavailableMoves), the reservations the balance
// voids, and the operator's moves to clear (done here, or void).

// Assignment is the member's assignment kept from changes and the part of
// it the member acts on. The shell feeds it what changed (SetShards, Hold,
// Release); Core.Decide computes it.
type Assignment struct {
	assigner *assign.Assigner
	listOf   []string // the shard list last given to SetShards
	// targets maps the shards the latest assignment targets here, and
	// those a runner runs here, to their targets (concerningUs); nil
	// before the first assignment.
	targets map[string]string
	// clearing holds the moves whose clear was planned (ClearMoves),
	// until the operator's state changes (OperatorChanged).
	clearing map[string]bool
}

// Begin makes the assigner on first use and reports whether it did (the
// shell then starts tracking the view's holders: everything is a change
// once).
func (a *Assignment) Begin() bool {
	if a.assigner != nil {
		return false
	}
	a.assigner = assign.NewAssigner()
	return true
}

// SetShards gives the assigner the shard list, unless it is the list it
// has (the shard list is replaced by the shell, never changed in place).
func (a *Assignment) SetShards(ids []string) {
	if !sameSlice(ids, a.listOf) {
		a.listOf = ids
		a.assigner.SetShards(ids)
	}
}

// sameSlice reports whether x and y are the same slice.
func sameSlice(x, y []string) bool {
	return len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
}

// Hold notes that member holds shard with token (a record's claim).
func (a *Assignment) Hold(shard, member string, token uint64) { a.assigner.Hold(shard, member, token) }

// Release notes that nobody holds shard.
func (a *Assignment) Release(shard string) { a.assigner.Release(shard) }

// Listed reports whether shard is in the shard list the assignment was
// last computed for (false before the first).
func (a *Assignment) Listed(shard string) bool {
	return a.assigner != nil && a.assigner.Listed(shard)
}

// Target returns the member the latest assignment targets shard to, for
// a shard targeted here or run here ("" otherwise).
func (a *Assignment) Target(shard string) string { return a.targets[shard] }

// Targets returns the latest targets (Target's); nil before the first
// assignment. The map is replaced, never changed, by Decide: the shell
// may hand it to other goroutines.
func (a *Assignment) Targets() map[string]string { return a.targets }

// SetTargets replaces the targets, for a member driven without a view
// (partition's hand-driven loops in its tests).
func (a *Assignment) SetTargets(t map[string]string) { a.targets = t }

// OperatorChanged forgets the moves whose clear was planned: the
// operator's new state shows what is left of them.
func (a *Assignment) OperatorChanged() { clear(a.clearing) }

// View is what the shell read of the root for a decide: the facts the
// core does not keep itself.
type View struct {
	// SelfLive: the view shows this member registered by its current
	// session; OpRead: the operator's state was read. Without either the
	// member keeps everything as it is.
	SelfLive, OpRead bool
	// Params is the assignment's input that is not per shard: the live
	// members running our shard list, their weights, the drains, the
	// pins (the operator's pins and moves, operator.State.AssignPins) and
	// the freeze; FreezeUntil is when a freeze lifts itself (zero: none,
	// or none that lifts itself).
	Params      assign.Params
	FreezeUntil time.Time
	// Unavailable maps each live member (this one included) to the
	// shards it publishes as unavailable.
	Unavailable map[string][]string
	// Moves and Pins are the operator's moves and pins alone (shard to
	// member); VoidMove reports whether the move of a shard can never
	// take effect (its target not live or drained, or the shard pinned
	// elsewhere: operator.State.VoidMove).
	Moves, Pins map[string]string
	VoidMove    func(shard string) bool
	// Runs reports whether a runner of the shard runs here; Running
	// walks those shards.
	Runs    func(shard string) bool
	Running iter.Seq[string]
}

// MoveClear is one clear of operator moves to plan: the moves of Shards
// (sorted) to member To.
type MoveClear struct {
	To     string
	Shards []string
}

// Decide is a step's decide stage: when the state changed (Steps.Dirty)
// it computes the assignment from what changed (the shell fed the
// assigner first), deals the shards some member cannot lead elsewhere,
// keeps the part that concerns this member (Targets), releases the
// reservations the balance dealt elsewhere, and plans the clears of the
// operator's moves: those to this member that are done (it leads the
// shard, and the assignment without the move keeps it here), and, by the
// member with the smallest id among Params.Members only, those that are
// void. It marks the runners stale and the step as acted when a shard got
// a new target. Nothing is computed while the view does not show this
// member live or the operator's state is unread.
func (c *Core[S]) Decide(v View, now time.Time) Plan {
	var p Plan
	if !c.Steps.Dirty {
		return p
	}
	c.Steps.Dirty = false
	if !v.SelfLive || !v.OpRead || c.Assign.assigner == nil {
		return p
	}
	if at := c.Freeze.Honoured(v.Params.Frozen, v.FreezeUntil); !at.IsZero() {
		p.wake(at.Sub(now))
	}
	a := &c.Assign
	res := a.assigner.Targets(v.Params)
	prev := a.targets
	var assigned int
	a.targets, assigned = c.concerningUs(res, v)
	if len(v.Unavailable) > 0 {
		count := make(map[string]int, len(v.Params.Members))
		for _, m := range v.Params.Members {
			count[m] = res.Count(m)
		}
		moved := UnavailableMoves(res.Target, count, c.unavailableInput(v), v.Unavailable)
		assigned = withMoves(a.targets, assigned, moved, c.me, v.Runs)
	}
	c.Steps.Acted = c.Steps.Acted || targetsMoved(prev, a.targets)
	c.Steps.Stale = true
	p.Computed, p.Assigned = true, assigned
	if len(v.Params.Pins) > 0 {
		p.ClearMoves = c.movesToClear(v)
	}
	for s := range c.Grace.Reserved() { // a reservation the balance gave elsewhere is void
		if a.targets[s] != c.me {
			c.Grace.Release(s)
			p.RecordChanged, c.Steps.Acted = true, true
		}
	}
	return p
}

// concerningUs is the part of an assignment the member acts on: the
// shards res targets here (O(our share)) and the targets of those a
// runner runs here, and how many it targets here.
func (c *Core[S]) concerningUs(res *assign.Result, v View) (map[string]string, int) {
	out := make(map[string]string, len(c.Assign.targets))
	n := 0
	res.Of(c.me, func(s string) bool {
		out[s] = c.me
		n++
		return true
	})
	for s := range v.Running {
		if _, ours := out[s]; !ours {
			if m := res.Target(s); m != "" {
				out[s] = m
			}
		}
	}
	return out, n
}

// unavailableInput is the part of the assignment's input
// UnavailableMoves reads: the takers, the pins, and the holders of the
// shards some member cannot lead.
func (c *Core[S]) unavailableInput(v View) assign.Input {
	p := v.Params
	in := assign.Input{Members: p.Members, Drained: p.Drained, Pins: p.Pins, Current: map[string]string{}}
	for _, shards := range v.Unavailable {
		for _, s := range shards {
			if h := c.Assign.assigner.Holder(s); h != "" {
				in.Current[s] = h
			}
		}
	}
	return in
}

// movesToClear plans the clears of the operator's moves that are done
// here (DoneMoves) and, by the member with the smallest id among those
// computing the same assignment, of those that are void; each is planned
// once (clearing) until the operator's state changes.
func (c *Core[S]) movesToClear(v View) []MoveClear {
	a := &c.Assign
	if a.clearing == nil {
		a.clearing = map[string]bool{}
	}
	var out []MoveClear
	done := DoneMoves(c.me, v.Moves, v.Pins, v.Params.Pins, c.Leading.Leads, a.clearing, func(pins map[string]string, s string) string {
		without := v.Params
		without.Pins = pins
		return a.assigner.Targets(without).Target(s)
	})
	if len(done) > 0 {
		out = append(out, MoveClear{To: c.me, Shards: done})
	}
	for _, s := range done {
		a.clearing[s] = true
	}
	if len(v.Moves) == 0 || len(v.Params.Members) == 0 || slices.Min(v.Params.Members) != c.me {
		return out
	}
	void := map[string][]string{}
	for s, to := range v.Moves {
		if !a.clearing[s] && v.VoidMove(s) {
			void[to] = append(void[to], s)
			a.clearing[s] = true
		}
	}
	for _, to := range slices.Sorted(maps.Keys(void)) {
		out = append(out, MoveClear{To: to, Shards: slices.Sorted(slices.Values(void[to]))})
	}
	return out
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
