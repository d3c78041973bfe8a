package partition

import (
	"time"

	"github.com/zkelect/zkelect/partition/operator"
)

// This file brings the operator state (partition/internal/root) into the loop:
// the members that run our shard list, their weights, the operator's
// metrics and logs of what operators changed.

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
func (l *loop) noteOperatorMetrics(assigned int) {
	frozen := l.view.Operator.Frozen(time.Now())
	me := l.m.cfg.MemberID
	l.m.met.assigned.Set(float64(assigned))
	l.m.met.weight.Set(float64(l.weight(me)))
	l.m.met.drained.Set(boolGauge(l.view.Operator.IsDrained(me)))
	l.m.met.frozen.Set(boolGauge(frozen))
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
