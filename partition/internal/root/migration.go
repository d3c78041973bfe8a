package root

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// This file moves a flat root to buckets, one shard at a time, while its
// members run (partition's migration.go is the members' side, package
// operator's MigrateToBuckets the operator's).
//
// The steps, and why a shard never has two leaders:
//
//  1. StartMigration takes CREATE from <root>/shards (MigrationLockACL) and then
//     creates <root>/buckets, its data the bucketed layout marked
//     FromFlat, with every bucket, in one transaction. From the lock on,
//     nobody (of any release, short of a super user) can create a flat
//     election <root>/shards/<id> that does not exist: a create needs
//     CREATE on <root>/shards.
//  2. A member of this release that reads the marker (at start, or by its
//     watch) no longer runs flat elections: it stops its flat runners as
//     if their shards had been removed (a leader's OnStoppedLeading
//     returns before its znode is deleted), then deletes the flat election
//     <root>/shards/<id>, which ZooKeeper refuses (NotEmpty) while any
//     candidate is in it: a member that has not read the marker yet, or
//     a leader elsewhere not done yet.
//  3. A member campaigns in shard id's bucketed election only after it
//     saw <root>/shards/<id> gone (its delete succeeded, or NoNode). The
//     delete succeeding means no candidate was in the flat election at
//     that point of ZooKeeper's order, so no flat leader existed; and by
//     1 the flat election cannot come back, so none exists later either.
//     A flat leader and a bucketed one are therefore never at once; the
//     bucketed leader's znode is created after the flat leader's was
//     deleted, so its czxid, the fencing token, is larger.
//  4. A member that dies mid-migration loses its znodes with its session;
//     its flat elections empty, and the member the assignment deals them
//     to deletes them and leads them in buckets.
//  5. Once <root>/shards has no children, FinishMigration (the operator's
//     waiter, or any member with no flat election of its own left) makes
//     it READ only (LockShards) and writes the layout without the mark:
//     the root is bucketed.
//
// A member of a release before this one does not read the marker and
// does not advertise Record.Migrate, so the operator's verb refuses to
// start while one is live. One started later cannot make a flat election
// (the lock), and one it joins cannot be deleted while its candidate is
// there (3): it may lead such a shard in flat, which holds that shard's
// move back until it stops, but never beside a bucketed leader.

// StartMigration takes CREATE from <root>/shards (MigrationLockACL) and
// creates <root>/buckets marked as moving from flat, with its buckets, acl
// on each (the members' ACL). It returns ErrShardsNotLocked when this
// session may not change that ACL (no ADMIN there), zk.ErrNodeExists if
// <root>/buckets exists (the move started, or the root is bucketed), and
// ZooKeeper's other errors wrapped with the path.
func StartMigration(ctx context.Context, sess *recipe.Session, root string, acl []zk.ACL) error {
	p := ShardsPath(root)
	got, st, err := sess.GetACL(ctx, p)
	if err != nil {
		return fmt.Errorf("read the ACL of %s: %w", p, err)
	}
	if !createsForbidden(got) {
		_, err := sess.SetACL(ctx, p, MigrationLockACL(got), st.Aversion)
		if errors.Is(err, recipe.ErrACLDenied) || errors.Is(err, zk.ErrBadVersion) {
			return fmt.Errorf("%w: %s (ACL %v): %v", ErrShardsNotLocked, p, got, err)
		}
		if err != nil {
			return fmt.Errorf("lock %s: %w", p, err)
		}
	}
	l := Layout{Buckets: DefaultBuckets, FromFlat: true}
	bdir := BucketsPath(root)
	ops := []any{&zk.CreateRequest{Path: bdir, Data: l.Encode(), Acl: acl}}
	for i := range l.Buckets {
		ops = append(ops, &zk.CreateRequest{Path: path.Join(bdir, l.bucketName(i)), Acl: acl})
	}
	if err := createAll(ctx, sess, ops); err != nil {
		return fmt.Errorf("create %s: %w", bdir, err)
	}
	return nil
}

// ErrShardsNotLocked reports a <root>/shards this session could not make
// READ only (it lacks ADMIN there): a flat root's move to buckets would
// not be safe, and is not started.
var ErrShardsNotLocked = errors.New("partition: <root>/shards could not be made read only")

// FinishMigration writes root's layout without the move's mark once
// <root>/shards has no children, and reports whether the root is now
// bucketed (false: flat elections remain). A root not moving is reported
// as it is (true when bucketed). Errors are ZooKeeper's, wrapped.
func FinishMigration(ctx context.Context, sess *recipe.Session, root string) (bool, error) {
	data, st, err := sess.Get(ctx, BucketsPath(root))
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", BucketsPath(root), err)
	}
	l, err := DecodeLayout(data)
	if err != nil || !l.Migrating() {
		return err == nil, err
	}
	_, sst, err := sess.Exists(ctx, ShardsPath(root)) // its Stat counts the children: no listing
	if err != nil {
		return false, fmt.Errorf("read %s: %w", ShardsPath(root), err)
	}
	if sst != nil && sst.NumChildren > 0 {
		return false, nil
	}
	if err := LockShards(ctx, sess, root); err != nil {
		return false, err
	}
	l.FromFlat = false
	if _, err := sess.Set(ctx, BucketsPath(root), l.Encode(), st.Version); err != nil && !errors.Is(err, zk.ErrBadVersion) {
		return false, fmt.Errorf("write %s: %w", BucketsPath(root), err)
	}
	return true, nil
}

// DeleteFlatElection deletes shard id's flat election <root>/shards/<id>
// and reports whether it is gone (deleted, or not there); false while a
// candidate is in it (NotEmpty). Other errors are ZooKeeper's, wrapped.
func DeleteFlatElection(ctx context.Context, sess *recipe.Session, root, id string) (bool, error) {
	p := Flat.ShardPath(root, id)
	err := sess.Delete(ctx, p, -1)
	switch {
	case err == nil || errors.Is(err, zk.ErrNoNode):
		return true, nil
	case errors.Is(err, zk.ErrNotEmpty):
		return false, nil
	}
	return false, fmt.Errorf("delete %s: %w", p, err)
}

// ElectionOf returns shard id's election path under root in layout l, as
// ShardPath does, except while a flat root moves to buckets: the flat
// election while it exists, the bucketed one after. Errors are
// ZooKeeper's, wrapped with the path.
func (l Layout) ElectionOf(ctx context.Context, sess *recipe.Session, root, id string) (string, error) {
	if !l.Migrating() {
		return l.ShardPath(root, id), nil
	}
	p := Flat.ShardPath(root, id)
	ok, _, err := sess.Exists(ctx, p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	if ok {
		return p, nil
	}
	return l.ShardPath(root, id), nil
}
