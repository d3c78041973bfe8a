package partition

import (
	"context"
	"errors"
	"path"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition/internal/member"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/operator"
)

// This file carries out the core's plans (member.Plan), every one of them:
// the stages (loop.go's step) and the events (handle, collect) only hand
// over what the core decided. The writes to ZooKeeper a plan asks for run
// in the background, each bounded, none blocking the loop.

// carryOutPlan is the one place the loop carries out what the core
// planned (member.Plan): runners to start, withdraw and stop, queued
// handoffs to ask while the throttle allows, a new assignment to hand to
// the runners, operator moves to clear, a removed shard's election and
// absent members' records to delete, metrics to observe, the record to
// publish again and the wake.
// Deciding and carrying out stay apart: nothing here decides.
func (l *loop) carryOutPlan(p member.Plan) {
	for _, s := range p.Start {
		l.start(s)
	}
	for _, s := range p.Withdraw {
		l.runners[s].Withdraw()
	}
	for _, s := range p.Stop {
		r := l.runners[s]
		l.book(r).removed = true
		r.Stop(l.m.removalReason(s))
	}
	if p.Computed {
		targets := l.core.Assign.Targets()
		l.sharedTargets.Store(&targets)
		l.m.met.assignments.Inc()
		l.noteOperatorMetrics(p.Assigned)
	}
	if len(p.ClearMoves) > 0 {
		l.clearMoves(p.ClearMoves)
	}
	for _, r := range p.DeleteRecords {
		l.deleteRecord(r)
	}
	if p.Failover > 0 {
		l.m.met.failovers.Observe(p.Failover.Seconds())
	}
	switch {
	case p.HandoffDeferred:
		l.m.met.deferred.Inc()
	case p.HandoffDone:
		l.m.met.handoffs.Observe(p.Handoff.Seconds())
	}
	if p.DeleteElection != "" {
		l.deleteShard(p.DeleteElection)
	}
	l.recordChanged = l.recordChanged || p.RecordChanged
	if p.WakeIn > 0 {
		l.wakeIn(p.WakeIn)
	}
	l.nextHandoffs() // after a reconcile or a handoff that ended; at once when none is queued or the throttle is full
}

// deleteShard deletes a removed shard's election znode; it stays while
// other members' candidates are still in it (the last one out deletes it).
func (l *loop) deleteShard(s string) {
	l.background(func() {
		err := l.m.sess.Delete(l.base, l.m.shardPath(s), -1)
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			l.m.log.Warn().Err(err).Str("shard", s).Msg("delete removed shard")
		}
	})
}

// deleteRecord deletes the record of an absent member at the version the
// core planned (version-checked, so a member that came back and rewrote
// its record keeps it).
func (l *loop) deleteRecord(r member.RecordVersion) {
	l.background(func() {
		err := l.m.sess.Delete(l.base, path.Join(l.m.root, rootdata.OwnersDir, r.ID), r.Version)
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			l.m.log.Warn().Err(err).Str("absent_member", r.ID).Msg("delete record after restart grace")
		}
	})
}

// clearMoves carries out the clears of operator moves the core planned
// (member.Core.Decide: moves to this member that are done, and void moves
// when this member has the smallest id): one version-checked write per
// target in the background (operator.ClearMoves keeps a move re-aimed
// meanwhile); a lost race is planned again once the operator's state
// changed. The member writes them, not an operator's tool, because only
// the member knows when a move is done (it leads the shard), and a void
// move left behind would hold the shard on its target when it comes back.
func (l *loop) clearMoves(clears []member.MoveClear) {
	me := l.m.cfg.MemberID
	l.background(func() {
		ctx, cancel := context.WithTimeout(l.base, l.m.sess.Timeout())
		defer cancel()
		o, err := operator.New(l.m.sess, l.m.root, l.m.cfg.ACL)
		for _, c := range clears {
			if err == nil {
				_, err = o.ClearMoves(ctx, c.Shards, c.To)
			}
			switch {
			case err != nil && c.To == me:
				l.m.log.Warn().Err(err).Strs("shards", c.Shards).Msg("clear completed moves")
				return
			case err != nil:
				l.m.log.Warn().Err(err).Strs("shards", c.Shards).Str("member", c.To).Msg("clear moves that cannot take effect")
				return
			case c.To == me:
				l.m.log.Info().Strs("shards", c.Shards).Msg("moves completed")
			default:
				l.m.log.Info().Strs("shards", c.Shards).Str("member", c.To).Msg("moves expired: their target is not live, is drained, or the shard is pinned elsewhere")
			}
		}
	})
}
