package partition

import (
	"context"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
	"github.com/zkelect/zkelect/partition/internal/member"
	"github.com/zkelect/zkelect/partition/operator"
)

// This file brings the operator state (partition/internal/root) into the loop:
// the assignment's input (with the members that run our shard list), the
// freeze's expiry, logs of what operators changed, and clearing a move this
// member completed.

// params is the part of the assignment's input that is not per shard:
// the live members that run our shard list, their weights and the
// operator's state; the holders come from the view (loopassign.go), our
// own claims from the loop, not from our record as read back: the record
// lags them by a publish, and is missing for a moment when the others
// deleted it while our session was replaced late in our restart grace.
// An assignment from it would void our reservations. The same at every
// member that sees the same znodes, the freeze's expiry aside (each
// member reads its own clock). It sets the wake timer for the freeze's
// end.
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
	var until time.Time
	if p.Frozen {
		until = op.Freeze.Until
	}
	if at := l.freeze.Honoured(p.Frozen, until); !at.IsZero() {
		l.wakeIn(at.Sub(now))
	}
	return p
}

// sameListMembers returns the live members that run our shard list, as
// their records say (see assign.ListDigest); it warns once about each member
// that runs another list.
func (l *loop) sameListMembers() []string {
	mine, me := l.m.currentShardSet(), l.m.cfg.MemberID
	var out []string
	for _, id := range l.view.LiveMembers() {
		r, ok := l.view.Records[id]
		if ok && r.Session == l.view.Members[id] && l.m.campaignsFlat(r.Record) {
			l.warnFlat(id)
			continue
		}
		if id == me || !ok || r.ShardSet == "" || r.ShardSet == mine || r.Session != l.view.Members[id] {
			out = append(out, id)
			continue
		}
		if l.otherLists[id] != r.ShardSet {
			l.otherLists[id] = r.ShardSet
			l.m.log.Warn().Str("other", id).Str("its_shards", r.ShardSet).Str("our_shards", mine).
				Msg("member runs another shard list: shards are dealt only among members with the same list")
		}
	}
	return out
}

// noteOperatorMetrics exports this member's weight, share (assigned: the
// shards the assignment targets here), drain and the freeze after an
// assignment.
func (l *loop) noteOperatorMetrics(frozen bool, assigned int) {
	me := l.m.cfg.MemberID
	l.m.met.assigned.Set(float64(assigned))
	l.m.met.weight.Set(float64(l.weight(me)))
	l.m.met.drained.Set(boolGauge(l.view.Operator.IsDrained(me)))
	l.m.met.frozen.Set(boolGauge(frozen))
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

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// weight returns member id's effective weight as the view shows it, our
// own from our configuration rather than from our record as read back.
func (l *loop) weight(id string) int {
	if w := l.m.cfg.Weight; id == l.m.cfg.MemberID && l.view.Operator.Weights[id] <= 0 && w > 0 {
		return w
	}
	return l.view.Weight(id)
}

// noticeOperator logs what operators changed that concerns every member
// (the freeze) or this one (a drain).
func (l *loop) noticeOperator(old, next operator.State) {
	now := time.Now()
	switch was, is := old.Frozen(now), next.Frozen(now); {
	case is && !was:
		ev := l.m.log.Info().Str("reason", next.Freeze.Reason)
		if !next.Freeze.Until.IsZero() {
			ev = ev.Time("until", next.Freeze.Until)
		}
		ev.Msg("rebalancing frozen by an operator: no balancing moves; orphaned shards are still taken over")
	case was && !is:
		l.m.log.Info().Msg("freeze lifted: rebalancing resumes")
	}
	me := l.m.cfg.MemberID
	switch was, is := old.IsDrained(me), next.IsDrained(me); {
	case is && !was:
		l.m.log.Info().Str("reason", next.Drained[me].Reason).Msg("drained by an operator: handing every shard away")
	case was && !is:
		l.m.log.Info().Msg("undrained by an operator: taking a share again")
	}
}

// clearMoves clears the moves to this member that are done: it leads the
// shard, and the assignment without the move keeps it here. Each clear is
// one version-checked write in the background; a lost race is retried at
// the next recompute.
func (l *loop) clearMoves(p assign.Params) {
	op := l.view.Operator.OperatorState
	me := l.m.cfg.MemberID
	done := member.DoneMoves(me, op.Moves, op.Pins, p.Pins, l.leading.Leads, l.clearing, func(pins map[string]string, s string) string {
		without := p
		without.Pins = pins
		return l.assigning.assigner.Targets(without).Target(s)
	})
	if len(done) == 0 {
		return
	}
	for _, s := range done {
		l.clearing[s] = true
	}
	l.background(func() {
		ctx, cancel := context.WithTimeout(l.base, l.m.sess.Timeout())
		defer cancel()
		op, err := operator.New(l.m.sess, l.m.root, l.m.cfg.ACL)
		if err == nil {
			_, err = op.ClearMoves(ctx, done, me)
		}
		if err != nil {
			l.m.log.Warn().Err(err).Strs("shards", done).Msg("clear completed moves")
			return
		}
		l.m.log.Info().Strs("shards", done).Msg("moves completed")
	})
}

// flatRelease stands in the loop's otherLists for a member of a release
// before buckets (no shard-list digest is this string).
const flatRelease = "release before buckets"

// warnFlat logs, once a member, that member id is of a release before
// buckets and leads nothing here.
func (l *loop) warnFlat(id string) {
	if l.otherLists[id] == flatRelease {
		return
	}
	l.otherLists[id] = flatRelease
	l.m.log.Error().Str("other", id).Str("root", l.m.root).
		Msg("member of a release before buckets on a bucketed root: it can lead no shard here (its elections under <root>/shards are refused) and is dealt none; upgrade or stop it")
}
