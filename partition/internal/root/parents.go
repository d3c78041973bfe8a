package root

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// This file creates the root and its children (EnsurePaths), and finds
// the shards whose election znode (Layout.ShardPath)
// does not exist when Run starts. The first candidate of each such shard
// creates the znode in the same transaction as its own
// (recipe.WithNewElection) and leads on that transaction's reply: a cold
// start of a fresh root costs one request per shard and needs no pass
// creating the shards' znodes first. A guess that was wrong (another
// member created the znode meanwhile) costs one failed transaction,
// after which the create goes without it.

// NewShards returns the set of ids with no election under root in layout
// l (ListShards), or nil when there is none.
func NewShards(ctx context.Context, sess *recipe.Session, root string, l Layout, ids []string) (map[string]bool, error) {
	existing, err := l.ListShards(ctx, sess, root)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(existing))
	for _, id := range existing {
		have[id] = true
	}
	var missing map[string]bool
	for _, id := range ids {
		if !have[id] {
			if missing == nil {
				missing = make(map[string]bool, len(ids)-len(have))
			}
			missing[id] = true
		}
	}
	return missing, nil
}

// EnsurePaths creates root and its three children, with acl, if missing,
// and returns the root's layout: that of <root>/shards as it finds it, or
// l when it creates the znode (createShards: with l's data and, bucketed,
// its buckets in the same transaction), so that a root's layout is
// recorded in the create that makes it. juteMax is the servers'
// jute.maxbuffer (0: DefaultJuteMaxBuffer), which bounds that transaction.
// Missing ancestors of root get recipe.SharedParentACL(acl) (for a
// secured acl world:anyone:cr): ZooKeeper checks a delete against the
// parent's ACL, so nobody may delete an empty root and create it again
// open, and another group may create its own root beside this one (a
// shared prefix such as /apps); existing ones keep theirs. A create refused by an ACL is no failure when
// the znode exists: ZooKeeper checks the parent's ACL (and an "auth" ACL's
// credentials) before it looks for the znode, so a reader without the
// group's rights gets ErrNoAuth or ErrInvalidACL rather than ErrNodeExists.
func EnsurePaths(ctx context.Context, sess *recipe.Session, root string, acl []zk.ACL, l Layout, juteMax int) (Layout, error) {
	var paths []string
	for p := root; p != "/"; p = path.Dir(p) {
		paths = append([]string{p}, paths...)
	}
	for _, child := range []string{MembersDir, OwnersDir, ShardsDir} {
		paths = append(paths, path.Join(root, child))
	}
	shared := recipe.SharedParentACL(acl)
	for _, p := range paths {
		a := acl
		if len(p) < len(root) {
			a = shared // an ancestor of root
		}
		var err error
		if p == ShardsPath(root) {
			if ok, _, xerr := sess.Exists(ctx, p); xerr == nil && ok {
				continue // the common case: no transaction of every bucket sent to fail
			}
			err = createShards(ctx, sess, root, a, l, juteMax)
		} else {
			_, err = sess.Create(ctx, p, nil, 0, a)
		}
		if err == nil || errors.Is(err, zk.ErrNodeExists) {
			continue
		}
		if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL) {
			if ok, _, xerr := sess.Exists(ctx, p); xerr == nil && ok {
				continue
			}
		}
		return Layout{}, fmt.Errorf("create %s: %w", p, err)
	}
	return ReadLayout(ctx, sess, root)
}

// createShards creates <root>/shards and, for a bucketed l, <root>/buckets
// with l's data (Layout.Encode) and every bucket, in the same transaction,
// <root>/shards then with ShardsLockACL(acl)
// (which makes the layout the root's for good): a candidate's
// first create (recipe.WithNewElection) then finds its bucket, and the
// election's znode is made in one request with it. 1,024 buckets under a
// root of 20 bytes with one ACL entry take about 80 KB. A transaction
// that would exceed half of juteMax (a small jute.maxbuffer, a very long
// root, a large ACL) creates
// <root>/shards and <root>/buckets first and the buckets one request
// each; a bucket missing
// after a crash is created by the first candidate that needs it (recipe
// creates missing ancestors). It returns zk.ErrNodeExists, and ZooKeeper's
// other errors, for <root>/shards itself as Create does.
func createShards(ctx context.Context, sess *recipe.Session, root string, acl []zk.ACL, l Layout, juteMax int) error {
	dir, bdir := ShardsPath(root), BucketsPath(root)
	if !l.Bucketed() {
		_, err := sess.Create(ctx, dir, nil, 0, acl)
		return err
	}
	lock := ShardsLockACL(acl) // no older release creates elections here (shardslock.go)
	ops := []any{&zk.CreateRequest{Path: dir, Acl: lock}, &zk.CreateRequest{Path: bdir, Data: l.Encode(), Acl: acl}}
	size := createRequestBytes(dir, nil, lock) + createRequestBytes(bdir, l.Encode(), acl)
	for i := range l.Buckets {
		b := path.Join(bdir, l.bucketName(i))
		ops = append(ops, &zk.CreateRequest{Path: b, Acl: acl})
		size += createRequestBytes(b, nil, acl)
	}
	if juteMax <= 0 {
		juteMax = DefaultJuteMaxBuffer
	}
	if size <= juteMax/2 {
		return createAll(ctx, sess, ops)
	}
	if err := createAll(ctx, sess, ops[:2]); err != nil {
		return err
	}
	for _, op := range ops[2:] {
		b := op.(*zk.CreateRequest).Path
		if _, err := sess.Create(ctx, b, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create bucket %s: %w", b, err)
		}
	}
	return nil
}

// createAll runs the creates ops in one transaction. It returns the first
// op's own error when that one failed (zk.ErrNodeExists: <root>/shards is
// there), not the roll-back error ZooKeeper gives the others.
func createAll(ctx context.Context, sess *recipe.Session, ops []any) error {
	res, err := sess.Multi(ctx, ops...)
	if err != nil && len(res) > 0 && res[0].Error != nil {
		return res[0].Error
	}
	return err
}

// createRequestBytes is the size of one create in a multi, in bytes: its
// header (type, done, error), the path, the data, the ACL and the flags.
func createRequestBytes(p string, data []byte, acl []zk.ACL) int {
	n := 4 + 1 + 4 + 4 + len(p) + 4 + len(data) + 4 + 4
	for _, a := range acl {
		n += 4 + 4 + len(a.Scheme) + 4 + len(a.ID)
	}
	return n
}
