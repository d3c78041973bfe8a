package root

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// This file keeps releases before buckets off a bucketed root.
//
// A release before buckets does not read <root>/buckets: on any root it
// creates its shards' elections at <root>/shards/<id> (each first
// candidate creates the election znode and itself in one multi), where it
// would lead beside the bucketed election of the same shard. A bucketed
// root's <root>/shards is therefore created with ShardsLockACL: the
// group's identities (or world:anyone) with READ only. ZooKeeper checks a
// create against its parent's CREATE permission before anything else, so
// every create of <root>/shards/<id> fails with NoAuth, whoever tries it
// (short of a super user); nothing of this release creates anything
// there. What an older release then does, read from its code:
//
//   - With a secured Config.ACL (digest, SASL, x509, "auth"), its start
//     checks <root>/shards with recipe.CheckACL, which refuses a znode
//     granting the session none of create, delete, write and admin:
//     Run returns an error wrapping recipe.ErrACLDenied, at once, naming
//     <root>/shards and its ACL, before the member registers.
//   - With the world ACL (no check), it registers and campaigns for the
//     shards its own assignment gives it; each campaign fails NoAuth and
//     is retried by the shard's runner, backing off from 50 ms to 2 s
//     (jittered): about one refused multi a shard a second
//     (bench/README.md), each logged as a warning, a retry storm at
//     scale. It leads nothing. Its code has no other exit an open root
//     could trigger (its Run ends only on errors preparing the root, the
//     ACL check above, registering, and a duplicate member id), so stop
//     it. Members of this release deal it no shard (its
//     record does not advertise buckets: Record.Buckets) and log an error
//     naming it, so the fleet's shards stay led.
//
// Members of this release also lock an existing bucketed root's
// <root>/shards at start (LockShards) when they may (ADMIN), so a root
// made before the lock, or opened again by hand, is locked by its next
// member.
//
// READ stays, so that a listing of <root>/shards (an older release's
// start, zkelect status, StrayElections) still answers, empty. The root's
// own ACL is untouched: ZooKeeper checks a delete of <root>/shards against
// the root's, so a prune of the whole root still works.

// ShardsLockACL returns acl with every entry's permissions cut to READ:
// the ACL of <root>/shards in a bucketed root.
func ShardsLockACL(acl []zk.ACL) []zk.ACL {
	out := make([]zk.ACL, len(acl))
	for i, a := range acl {
		a.Perms = zk.PermRead
		out[i] = a
	}
	return out
}

// MigrationLockACL returns acl with CREATE and WRITE taken from every
// entry (READ added): the ACL of <root>/shards while a flat root moves to
// buckets. Nobody can create a flat election any more, and the members can
// still delete the ones there (a delete needs DELETE on the parent) and
// make it READ only at the end (ADMIN).
func MigrationLockACL(acl []zk.ACL) []zk.ACL {
	out := make([]zk.ACL, len(acl))
	for i, a := range acl {
		a.Perms = a.Perms&(zk.PermDelete|zk.PermAdmin) | zk.PermRead
		out[i] = a
	}
	return out
}

// createsForbidden reports whether acl grants nobody CREATE.
func createsForbidden(acl []zk.ACL) bool {
	for _, a := range acl {
		if a.Perms&zk.PermCreate != 0 {
			return false
		}
	}
	return true
}

// ShardsLocked reports whether acl, read from <root>/shards, grants nobody
// more than READ.
func ShardsLocked(acl []zk.ACL) bool {
	for _, a := range acl {
		if a.Perms&^zk.PermRead != 0 {
			return false
		}
	}
	return true
}

// LockShards makes the <root>/shards of a bucketed root READ only
// (ShardsLockACL of its ACL) if it is not: a root made before this
// release locked it, or opened again by hand. The set is conditional on
// the ACL version read, so two members locking at once both succeed (the
// second finds it locked, or fails BadVersion and leaves it to the first).
// A session without ADMIN on the znode leaves it as it is (nil): the
// start's ACL check reads it. Other errors are ZooKeeper's, wrapped with
// the path.
func LockShards(ctx context.Context, sess *recipe.Session, root string) error {
	p := ShardsPath(root)
	acl, st, err := sess.GetACL(ctx, p)
	switch {
	case errors.Is(err, recipe.ErrACLDenied) || errors.Is(err, zk.ErrNoAuth):
		return nil
	case err != nil:
		return fmt.Errorf("read the ACL of %s: %w", p, err)
	case ShardsLocked(acl):
		return nil
	}
	_, err = sess.SetACL(ctx, p, ShardsLockACL(acl), st.Aversion)
	if err == nil || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, recipe.ErrACLDenied) {
		return nil
	}
	return fmt.Errorf("make %s read only: %w", p, err)
}
