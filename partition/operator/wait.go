package operator

import (
	"context"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/root/electview"
)

// This file waits for the effect of an operator's change, following the
// live members and the operator state with watches and the leaders with
// the elections themselves (internal/root/electview), no polling: a wait ends
// when the shards moved, not when a record says so. A wait cut off from
// ZooKeeper (connection loss, the session expired and replaced), even
// past the session timeout and at its start, goes on once the session
// connects again; it ends early only with an error wrapping
// recipe.ErrSessionClosed once the session is closed, the session's
// EndErr once it ended for good, or ZooKeeper's refusal of the watch or a
// read (an ACL, a server before 3.6).

// WaitDrained blocks until no election under the root has member as its
// leader while it is live and drained (or it is no longer live), or ctx
// ends (ctx's error). It returns an error wrapping ErrRefused if member is
// undrained meanwhile.
func (o *Operator) WaitDrained(ctx context.Context, member string) error {
	return o.await(ctx, func(v *rootdata.View, e *electview.Elections) (bool, error) {
		if _, live := v.Members[member]; !live {
			return true, nil
		}
		if !v.Operator.IsDrained(member) {
			return false, refused("member %q is not drained", member)
		}
		for _, l := range e.Leaders() {
			if l.Member == member {
				return false, nil
			}
		}
		return true, nil
	})
}

// WaitMoved blocks until member leads shard, as its election holds it,
// and the move is cleared, or ctx ends (ctx's error). It returns an error
// wrapping ErrRefused when member cannot get the shard: it is not live or
// is drained (a move to it expires), or the shard is pinned to another
// member. A move cancelled by Unmove leaves the shard to the balance:
// WaitMoved then waits until ctx ends or the balance gives member the
// shard.
func (o *Operator) WaitMoved(ctx context.Context, shard, member string) error {
	return o.await(ctx, func(v *rootdata.View, e *electview.Elections) (bool, error) {
		op := v.Operator.OperatorState
		_, moving := op.Moves[shard]
		p, pinned := op.Pins[shard]
		_, live := v.Members[member]
		switch {
		case !live || op.IsDrained(member):
			return false, refused("member %q is not live or is drained: shard %s cannot move to it", member, shard)
		case pinned && p != member:
			return false, refused("shard %s is pinned to %s", shard, p)
		}
		return !moving && e.Leaders()[shard].Member == member, nil
	})
}

// await follows the root's znodes until done reports true or an error,
// after each burst of changes, or ctx ends (ctx's error).
func (o *Operator) await(ctx context.Context, done func(*rootdata.View, *electview.Elections) (bool, error)) error {
	err := electview.Follow(ctx, o.sess, o.root, "wait on", func(v *rootdata.View, e *electview.Elections) (bool, error) {
		ok, err := done(v, e)
		return !ok, err
	})
	if err == nil {
		err = ctx.Err()
	}
	return err
}
