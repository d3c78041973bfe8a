package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// This file moves a flat root (made by a release before buckets) to
// buckets while its members run: the steps, and why no shard has two
// leaders on the way, are in partition/internal/root/migration.go.

// MigrateToBuckets starts moving a flat root's shard elections to buckets
// (<root>/buckets/<bucket>/<id>): it makes <root>/shards read only and
// writes the bucketed layout marked as moving, with its 1,024 buckets.
// The members then hand each shard from its flat election to its bucketed
// one (OnStoppedLeading with partition.ErrMovedToBuckets, then
// OnStartedLeading with a larger token); WaitMigrated waits for the end.
// It reports false for a root already bucketed or moving. It refuses,
// wrapping ErrRefused, while a live member does not take part in the move
// (a release before it: upgrade every member first) or has not published
// its record yet, and when this session may not lock <root>/shards (it
// lacks ADMIN there: use the members' credentials). Other errors are
// ZooKeeper's, wrapped.
func (o *Operator) MigrateToBuckets(ctx context.Context) (bool, error) {
	l, err := rootdata.ReadLayout(ctx, o.sess, o.root)
	if err != nil {
		return false, fmt.Errorf("partition: %w", err)
	}
	if l.Bucketed() {
		return false, nil
	}
	live, recs, err := o.members(ctx)
	if err != nil {
		return false, err
	}
	var old []string
	for id := range live {
		if !recs[id].Migrate {
			old = append(old, id)
		}
	}
	if len(old) > 0 {
		slices.Sort(old)
		return false, refused("members %v do not take part in moving %s to buckets (an older release, or no record yet): upgrade them first", old, o.root)
	}
	err = rootdata.StartMigration(ctx, o.sess, o.root, o.acl)
	switch {
	case errors.Is(err, zk.ErrNodeExists):
		return false, nil
	case errors.Is(err, rootdata.ErrShardsNotLocked), errors.Is(err, zk.ErrNoAuth):
		return false, refused("%v", err)
	case err != nil:
		return false, err
	}
	return true, nil
}

// WaitMigrated blocks until the root's move to buckets is over: every flat
// election is gone (its shard led in its bucket, or by nobody), and the
// layout is written without the move's mark (FinishMigration, which this
// call makes once <root>/shards is empty). It returns nil for a root
// already bucketed, an error wrapping ErrRefused for a flat root that is
// not moving, and ctx's error when it ends first. Cut off from ZooKeeper
// (connection loss, the session expired and replaced), even past the
// session timeout, it waits for the session and reads again (see retry);
// other errors are ZooKeeper's (an ACL), wrapped, or an error wrapping
// recipe.ErrSessionClosed once the session is closed.
func (o *Operator) WaitMigrated(ctx context.Context) error {
	return o.retry(ctx, func() error { return o.waitMigratedOnce(ctx) })
}

// waitMigratedOnce is WaitMigrated until a read fails.
func (o *Operator) waitMigratedOnce(ctx context.Context) error {
	for {
		l, err := rootdata.ReadLayout(ctx, o.sess, o.root)
		if err != nil {
			return fmt.Errorf("partition: %w", err)
		}
		if !l.Bucketed() {
			return refused("%s is flat and not moving to buckets", o.root)
		}
		done, err := rootdata.FinishMigration(ctx, o.sess, o.root)
		if err != nil || done {
			return err
		}
		wctx, forget := context.WithCancel(ctx)
		kids, _, ch, err := o.sess.ChildrenW(wctx, rootdata.ShardsPath(o.root))
		if err != nil {
			forget()
			return fmt.Errorf("partition: watch %s: %w", rootdata.ShardsPath(o.root), err)
		}
		if len(kids) > 0 { // not emptied since FinishMigration looked
			select {
			case <-ctx.Done():
			case <-ch:
			}
		}
		forget() // the watch, if it has not fired
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
