package partition

import (
	"slices"
	"time"

	"github.com/zkelect/zkelect/partition/internal/member"
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

// reconcile is the loop's third stage (step, loop.go), run when the
// runners lag the assignment once the startup wait is over: the core
// plans (member.Core.Reconcile) the runners to start for shards assigned
// here, those to withdraw, the leaderships assigned elsewhere to hand
// off (at most MaxConcurrentHandoffs at once: nextHandoffs) and the
// runners of removed shards to stop. It walks only the shards that
// concern this member (concerned: our targets and our runners), so it
// costs our share, not the whole shard list.
func (l *loop) reconcile() member.Plan {
	return l.core.Reconcile(l.concerns(), time.Now(), l.settleDelay(), l.drainHonoured())
}

// drainHonoured reports whether an operator drained this member and the
// assignment honours it: some other live member is not drained (drains
// that name every live member are ignored, assign.Assign's rule 0).
func (l *loop) drainHonoured() bool {
	op := l.view.Operator
	if !op.IsDrained(l.m.cfg.MemberID) {
		return false
	}
	for _, id := range l.view.LiveMembers() {
		if !op.IsDrained(id) {
			return true
		}
	}
	return false
}

// concerns returns what the core's Reconcile reads of each shard that
// concerns this member (concerned), sorted.
func (l *loop) concerns() []member.Concern {
	shards := l.concerned()
	out := make([]member.Concern, len(shards))
	for i, s := range shards {
		r := l.runners[s]
		out[i] = member.Concern{
			Shard: s, Target: l.core.Assign.Target(s), Runner: r != nil,
			Busy:     r != nil && (r.Stopping() || l.books[r] != nil && l.books[r].handoff),
			Stopping: r != nil && r.StopReason() != nil,
			Skip:     !l.core.Assign.Listed(s) || !l.m.runnableShard(s),
		}
	}
	return out
}

// concerned returns, sorted, the shards that concern this member: those
// assigned here and those it runs a runner for (whose targets l.targets
// also holds, concerningUsOf).
func (l *loop) concerned() []string {
	targets := l.core.Assign.Targets()
	out := make([]string, 0, len(targets)+len(l.runners))
	for s := range targets {
		out = append(out, s)
	}
	for s := range l.runners {
		if _, ok := targets[s]; !ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// nextHandoffs starts queued handoffs while fewer than
// MaxConcurrentHandoffs run, so a finished handoff is followed by the next
// one at once, not at the next step. Entries that are no longer due are
// skipped.
func (l *loop) nextHandoffs() {
	l.core.Handoffs.Next(l.m.cfg.MaxConcurrentHandoffs, l.askHandoff)
}

// askHandoff asks the runner of shard s to hand it off to its target, if
// that is still due, and reports whether it did.
func (l *loop) askHandoff(s string) bool {
	r := l.runners[s]
	leading := l.core.Leading.Leads(s)
	to := l.core.Assign.Target(s)
	if r == nil || !leading || r.Stopping() || l.book(r).handoff || to == l.m.cfg.MemberID {
		return false
	}
	if !r.AskHandoff(to) { // an unanswered request is still queued
		return false
	}
	b := l.book(r)
	b.handoff, b.stopAt = true, time.Now()
	return true
}

// start launches the runner of shard s.
func (l *loop) start(s string) {
	r := shard.NewRunner(l.member, s, l.newShards[s] || l.m.likelyNewBucketed(s))
	l.runners[s] = r
	l.workers.Add(1) // done by the runner's finish
	l.starts.Push(r)
}

// What the loop gives its runners (partition/internal/shard): the Manager
// seen through shard.Env, and the values they share.

// shardEnv is the loop and its Manager as their runners see them.
type shardEnv struct {
	m *Manager
	l *loop
}

func (e shardEnv) TargetOf(s string) string     { return e.l.targetOf(s) }
func (e shardEnv) ElectionPath(s string) string { return e.m.runnerPath(s) }
func (e shardEnv) CountStop(reason error)       { e.m.met.stopped.WithLabelValues(reasonLabel(reason)).Inc() }

// shardMember returns what the loop's runners share, fixed for the run.
func (l *loop) shardMember() *shard.Member {
	m := l.m
	return &shard.Member{
		Env: shardEnv{m, l}, MemberID: m.cfg.MemberID, ACL: m.cfg.ACL, HandoffTimeout: m.cfg.HandoffTimeout,
		Naming: m.naming, MetricsLabel: m.shardsLabel(),
		OnStartedLeading: m.cfg.OnStartedLeading, OnStoppedLeading: m.cfg.OnStoppedLeading,
		Log: m.log, PassedOn: m.met.passedOn, Started: m.met.started,
		Held: m.held, Primary: m.sess, Sessions: m.pool, Events: l.events, Workers: &l.workers,
		Transitions: shard.NewTransitions(m.cfg.MaxConcurrentHandoffs),
	}
}

// book returns the loop's record of runner r, made on first use and
// dropped when r reports shard.Finished.
func (l *loop) book(r *shard.Runner) *runnerBook {
	b := l.books[r]
	if b == nil {
		b = &runnerBook{}
		l.books[r] = b
	}
	return b
}
