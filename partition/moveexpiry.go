package partition

import (
	"context"
	"slices"

	"github.com/zkelect/zkelect/partition/assign"
	"github.com/zkelect/zkelect/partition/operator"
)

// expireMoves clears the moves that can never take effect
// (OperatorState.VoidMove: the target is not live or is drained, or the
// shard is pinned to another member). The assignment already ignores
// them; cleared, they do not hold the shard on their target again when it
// comes back. Only the member with the smallest id among p.Members (those
// that compute the same assignment) writes, one version-checked write per
// target in the background (operator.ClearMoves keeps a move re-aimed
// meanwhile); a lost race is retried at the next recompute.
func (l *loop) expireMoves(p assign.Params) {
	op := l.view.Operator.OperatorState
	me := l.m.cfg.MemberID
	if len(op.Moves) == 0 || len(p.Members) == 0 || slices.Min(p.Members) != me {
		return
	}
	void := map[string][]string{} // target to its void moves' shards
	for s, to := range op.Moves {
		if !l.clearing[s] && op.VoidMove(s, l.view.Members) {
			void[to] = append(void[to], s)
			l.clearing[s] = true
		}
	}
	if len(void) == 0 {
		return
	}
	l.background(func() {
		ctx, cancel := context.WithTimeout(l.base, l.m.sess.Timeout())
		defer cancel()
		o, err := operator.New(l.m.sess, l.m.root, l.m.cfg.ACL)
		for to, shards := range void {
			if err == nil {
				_, err = o.ClearMoves(ctx, shards, to)
			}
			if err != nil {
				l.m.log.Warn().Err(err).Strs("shards", shards).Str("member", to).Msg("clear moves that cannot take effect")
				return
			}
			l.m.log.Info().Strs("shards", shards).Str("member", to).Msg("moves expired: their target is not live, is drained, or the shard is pinned elsewhere")
		}
	})
}
