package operator

import (
	"context"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file waits for the effect of an operator's change, following the
// same znodes as the members (members, records, operator state) with
// watches, no polling.

// WaitDrained blocks until member's record publishes no leadership while
// it is live and drained (or it is no longer live), or ctx ends (ctx's
// error). It returns an error wrapping ErrRefused if member is undrained
// meanwhile.
func (o *Operator) WaitDrained(ctx context.Context, member string) error {
	return o.await(ctx, func(v *rootdata.View) (bool, error) {
		sess, live := v.Members[member]
		if !live {
			return true, nil
		}
		if !v.Operator.IsDrained(member) {
			return false, refused("member %q is not drained", member)
		}
		r, ok := v.Records[member]
		return ok && r.Session == sess && len(r.Leading) == 0, nil
	})
}

// WaitMoved blocks until member leads shard, as the records publish it,
// and the move is cleared, or ctx ends (ctx's error). It returns an error
// wrapping ErrRefused when member cannot get the shard: it is not live or
// is drained (a move to it expires), or the shard is pinned to another
// member. A move cancelled by Unmove leaves the shard to the balance:
// WaitMoved then waits until ctx ends or the balance gives member the
// shard.
func (o *Operator) WaitMoved(ctx context.Context, shard, member string) error {
	return o.await(ctx, func(v *rootdata.View) (bool, error) {
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
		return !moving && v.Leaders()[shard].Member == member, nil
	})
}

// await follows the root's znodes until done reports true or an error,
// after each burst of changes, or ctx ends (ctx's error).
func (o *Operator) await(ctx context.Context, done func(*rootdata.View) (bool, error)) error {
	err := rootdata.Follow(ctx, o.sess, o.root, "wait on", func(v *rootdata.View) (bool, error) {
		ok, err := done(v)
		return !ok, err
	})
	if err == nil {
		err = ctx.Err()
	}
	return err
}
