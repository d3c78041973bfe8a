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
// the shards whose election znode (<root>/shards/<id>)
// does not exist when Run starts. The first candidate of each such shard
// creates the znode in the same transaction as its own
// (recipe.WithNewElection) and leads on that transaction's reply: a cold
// start of a fresh root costs one request per shard and needs no pass
// creating the shards' znodes first. A guess that was wrong (another
// member created the znode meanwhile) costs one failed transaction,
// after which the create goes without it.

// NewShards returns the set of ids with no znode under <root>/shards, or
// nil when there is none.
func NewShards(ctx context.Context, sess *recipe.Session, root string, ids []string) (map[string]bool, error) {
	dir := path.Join(root, ShardsDir)
	existing, _, err := sess.Children(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
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

// EnsurePaths creates root and its three children, with acl, if missing.
// Root's parent gets acl too: ZooKeeper checks a delete against the
// parent's ACL, so an open parent would let anyone delete an empty root
// and create it again open. Missing ancestors above the parent are created
// open (zk.WorldACL(zk.PermAll)), so that one group's ACL does not lock
// others out of a shared prefix such as /apps; they cannot be deleted
// while they have children. A create refused by an ACL is no failure when
// the znode exists: ZooKeeper checks the parent's ACL (and an "auth" ACL's
// credentials) before it looks for the znode, so a reader without the
// group's rights gets ErrNoAuth or ErrInvalidACL rather than ErrNodeExists.
func EnsurePaths(ctx context.Context, sess *recipe.Session, root string, acl []zk.ACL) error {
	var paths []string
	for p := root; p != "/"; p = path.Dir(p) {
		paths = append([]string{p}, paths...)
	}
	for _, child := range []string{MembersDir, OwnersDir, ShardsDir} {
		paths = append(paths, path.Join(root, child))
	}
	open, parent := zk.WorldACL(zk.PermAll), path.Dir(root)
	for _, p := range paths {
		a := acl
		if len(p) < len(parent) {
			a = open // an ancestor of root's parent
		}
		_, err := sess.Create(ctx, p, nil, 0, a)
		if err == nil || errors.Is(err, zk.ErrNodeExists) {
			continue
		}
		if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL) {
			if ok, _, xerr := sess.Exists(ctx, p); xerr == nil && ok {
				continue
			}
		}
		return fmt.Errorf("create %s: %w", p, err)
	}
	return nil
}
