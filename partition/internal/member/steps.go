package member

import (
	"slices"
	"time"
)

// This file paces the member's steps: when a step decides and reconciles,
// from what changed and what the recent steps cost.

// MinStep spaces out the loop's steps: computing the assignment and
// walking every shard costs milliseconds at 10,000 shards and a few
// hundred at 100,000, and during a cold start or a join records and
// runners change many times a second. A step also waits stepCostFactor
// times the typical cost of the recent ones (the median of the last
// stepCostWindow: steps of every member of a process share its cores, so
// members whose steps cost much step less often and the machine is not
// saturated by them), but never more than MaxStepGap. One step slowed by
// the machine (a garbage collection of a large heap, the CPU shared with
// other work) does not count. Gaps are paced by cost rather than capped
// low because steps of many members in one process would otherwise take
// the cores the handoffs need (bench/README.md has the figures).
//
// Steps that change nothing space out further: each one in a row doubles
// the gap, up to maxQuietDoublings times (and MaxStepGap). During a drain
// or a join every handoff changes a record, so every member's view, and
// recomputing the same assignment each time would take the CPU the
// handoffs need. A step that acts (a shard given a new
// target, a runner started, withdrawn or queued for a handoff, a settle
// begun) brings the gap back to its cost's. A step something is waiting
// for (a settle or a freeze ending, a runner to restart: due) waits the
// gap of its cost, not the doubled one; an operator's change and a change
// of the live members wait MinStep (Urgent: Pace).
const (
	MinStep           = 20 * time.Millisecond
	MaxStepGap        = 5 * time.Second
	stepCostFactor    = 10
	maxQuietDoublings = 3
)

// NoteCost records the cost of the step that just ran and whether it
// acted, and sets the gap before the next one: stepCostFactor times the
// median of the last stepCostWindow costs (baseGap), doubled for each
// step in a row (up to maxQuietDoublings) that did not act, within
// [MinStep, MaxStepGap].
func (s *Steps) NoteCost(cost time.Duration, acted bool) {
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
	s.baseGap = min(max(MinStep, stepCostFactor*recent[(n-1)/2]), MaxStepGap)
	s.stepGap = min(s.baseGap<<s.quiet, MaxStepGap)
}

// stepCostWindow is how many of the last steps' costs pace the next
// (NoteCost): the median of three ignores one slow step.
const stepCostWindow = 3

// Steps is what changed since the member's last step and when the next
// may run. The flags are set by the events the shell feeds; Pace and
// NoteCost are the step's own.
type Steps struct {
	Dirty   bool // the view or the shard list changed: recompute
	ViewNew bool // the view changed since OnLeaderChanged was last given its leaders
	Urgent  bool // an operator's or the live members' change came: the next step runs MinStep after the last (Pace)
	Due     bool // a timer or a runner asks for a step: it waits the step gap, not the quiet one (Pace)
	Stale   bool // runners changed: reconcile
	// Acted: this step gave a shard a new target, started, withdrew or
	// stopped a runner, queued a handoff beyond those pending, began a
	// settle or released a reservation (NoteCost).
	Acted bool

	lastStep time.Time                     // when the assignment was last computed or acted on
	stepGap  time.Duration                 // least time between two steps
	baseGap  time.Duration                 // stepGap before the quiet steps' doublings
	costs    [stepCostWindow]time.Duration // the last steps' costs, a ring (NoteCost)
	costAt   int                           // steps noted so far
	quiet    int                           // steps in a row that did not act (NoteCost)
}

// LastStep returns when the last step that decided began.
func (s *Steps) LastStep() time.Time { return s.lastStep }

// Pace reports whether the step at now decides and reconciles: only when the
// state changed (dirty) or the runners lag the assignment (stale), and at
// most once per stepGap, or MinStep after an operator's change or a change
// of the live members (urgent: a drain, a move, a freeze, a crash or a
// join is acted on at once, not a step gap of seconds later at 100,000
// shards; those come a few a minute, not the many a second members'
// records change); a step something waits for (due) waits baseGap, not
// the quiet steps' longer gap. A step put off returns how long until it
// may run (the shell wakes then).
func (s *Steps) Pace(now time.Time) (run bool, wait time.Duration) {
	if !s.Dirty && !s.Stale {
		return false, 0
	}
	gap := s.stepGap
	switch {
	case s.Urgent:
		gap = MinStep
	case s.Due:
		gap = s.baseGap
	}
	if wait := gap - now.Sub(s.lastStep); wait > 0 {
		return false, wait
	}
	if s.Urgent {
		s.quiet = 0
	}
	s.lastStep, s.Urgent, s.Due = now, false, false
	return true, 0
}
