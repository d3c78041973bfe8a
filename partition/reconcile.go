package partition

import (
	"slices"
	"time"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/shard"
)

// This file turns the assignment into action: it starts runners for the
// shards assigned here, withdraws the others, and hands off leaderships
// assigned elsewhere once the assignment has settled, a few at a time.

// A shard led here must stay assigned elsewhere for the settle delay before
// it is handed off. Records lag behind leaderships by up to a publish
// interval plus a write, so an assignment computed during a burst of
// changes can name a member that no longer (or not yet) holds a shard;
// waiting for it to settle avoids handing a shard over and back. The delay
// is minSettle, or four times our slowest recent record write when
// ZooKeeper is slow (others' writes are likely as slow), at most maxSettle.
const (
	minSettle = 4 * rootdata.PublishInterval
	maxSettle = 2 * time.Second
)

// settleDelay returns the current settle delay.
func (l *loop) settleDelay() time.Duration {
	return min(max(minSettle, 4*l.pub.SlowWrite()), maxSettle)
}

// reconcileStale is the loop's third stage (step, loop.go): it
// reconciles the runners with the assignment when they lag it, once the
// startup wait is over (startup.go).
func (l *loop) reconcileStale() {
	if l.steps.Stale && l.startupSettled() {
		l.reconcile()
	}
}

// reconcile starts runners for shards assigned here, withdraws the others,
// hands off leaderships assigned elsewhere (at most MaxConcurrentHandoffs
// at once) and stops the runners of removed shards. It walks only the
// shards that concern this member (concerned: our targets and our
// runners), so it costs our share, not the whole shard list.
func (l *loop) reconcile() {
	if !l.selfLive() {
		return
	}
	l.steps.Stale = false
	pending := l.handoffs.Requeue()
	me, now, drained := l.m.cfg.MemberID, time.Now(), l.drainHonoured()
	l.handoffs.ForgetUnless(func(s string) bool { return l.runners[s] != nil })
	for _, s := range l.concerned() {
		r := l.runners[s]
		if !l.listed(s) || !l.m.runnableShard(s) {
			continue // removed (stopRemoved), or moving to buckets (layout.go)
		}
		leading := l.leading.Leads(s)
		if l.targets[s] == me || r == nil || !leading {
			l.handoffs.Forget(s)
		}
		switch {
		case l.targets[s] == me && r == nil:
			l.start(s)
			l.steps.Acted = true
		case l.targets[s] == me || r == nil || r.Stopping() || l.book(r).handoff:
		case !leading:
			r.Withdraw()
			l.steps.Acted = true
		case !l.settled(s, now, drained):
		default:
			l.handoffs.Queue(s)
		}
	}
	l.steps.Acted = l.steps.Acted || l.handoffs.Queued() > pending // more due than the last step left waiting
	l.nextHandoffs()
	l.stopRemoved()
	// The shards dealt to others are created by their candidates; one
	// assigned here later finds its znode made, or makes it the slow way.
	l.newShards = nil
}

// concerned returns, sorted, the shards that concern this member: those
// assigned here and those it runs a runner for (whose targets l.targets
// also holds, concerningUsOf).
func (l *loop) concerned() []string {
	out := make([]string, 0, len(l.targets)+len(l.runners))
	for s := range l.targets {
		out = append(out, s)
	}
	for s := range l.runners {
		if _, ok := l.targets[s]; !ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// listed reports whether shard s is in the shard list the assignment was
// last computed for.
func (l *loop) listed(s string) bool {
	return l.assigning.assigner != nil && l.assigning.assigner.Listed(s)
}

// stopRemoved stops the runners of shards no longer in the list, and
// those that may not run now (a flat election's runner in a root moving
// to buckets: ErrMovedToBuckets, removalReason). It walks our runners
// only; before the first assignment it knows no list and stops nothing.
func (l *loop) stopRemoved() {
	if l.assigning.assigner == nil {
		return
	}
	for s, r := range l.runners {
		if (!l.listed(s) || !l.m.runnableShard(s)) && r.StopReason() == nil {
			l.steps.Acted = true
			l.book(r).removed = true
			r.Stop(l.m.removalReason(s))
		}
	}
}

// nextHandoffs starts queued handoffs while fewer than
// MaxConcurrentHandoffs run, so a finished handoff is followed by the next
// one at once, not at the next step. Entries that are no longer due are
// skipped.
func (l *loop) nextHandoffs() {
	l.handoffs.Next(l.m.cfg.MaxConcurrentHandoffs, l.askHandoff)
}

// askHandoff asks the runner of shard s to hand it off to its target, if
// that is still due, and reports whether it did.
func (l *loop) askHandoff(s string) bool {
	r := l.runners[s]
	leading := l.leading.Leads(s)
	if r == nil || !leading || r.Stopping() || l.book(r).handoff || l.targets[s] == l.m.cfg.MemberID {
		return false
	}
	if !r.AskHandoff(l.targets[s]) { // an unanswered request is still queued
		return false
	}
	b := l.book(r)
	b.handoff, b.stopAt = true, time.Now()
	return true
}

// settled reports whether shard s, led here, has been assigned elsewhere
// for the settle delay; otherwise it arms the settle timer to look again.
// A drained member's shards are settled at once (drained): every
// assignment deals them elsewhere, whatever the records say (the handoff
// still waits for the target's candidate, and looks again if the target
// changes).
func (l *loop) settled(s string, now time.Time, drained bool) bool {
	ok, begun, wait := l.handoffs.Settled(s, now, l.settleDelay(), drained)
	l.steps.Acted = l.steps.Acted || begun // a settle begun: the step that ends it must not wait long
	if wait > 0 {
		l.wakeIn(wait)
	}
	return ok
}

// start launches the runner of shard s.
func (l *loop) start(s string) {
	r := shard.NewRunner(l.member, s, l.newShards[s] || l.m.likelyNewBucketed(s))
	l.runners[s] = r
	l.workers.Add(1) // done by the runner's finish
	l.starts.Push(r)
}
