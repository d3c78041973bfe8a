package operator

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/partition/assign"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// Prune deletes the elections under root of shards not in shards, the list
// every live member runs: those a member started with a longer list by
// mistake left behind (they stay, unled, until someone removes them). With
// dryRun it only reports them.
//
// It refuses, with an error wrapping ErrPruneRefused that names the member,
// while any live member (a znode under <root>/members) may run another
// list: its record under <root>/owners publishes a different shard-list
// digest, or none yet (a member just starting, or of an earlier release).
// It deletes only empty elections: ZooKeeper refuses to delete one that
// holds a znode (a candidate that appeared meanwhile), and such shards are
// returned in kept, not deleted. A member started with the longer list
// while Prune runs creates its elections again; run Prune once every
// member runs the list.
//
// A connection loss (or another retryable answer, see recipe.Retryable) is
// retried with backoff until ctx ends; deleted then counts every attempt.
//
// It returns the shards whose elections it deleted (or, with dryRun, would
// delete), sorted as strings, and those it kept; errors are ZooKeeper's,
// wrapped with the path, ErrInvalidRoot, ErrInvalidShardID or
// ErrDuplicateShard for bad input, and ErrNilSession.
func Prune(ctx context.Context, sess *recipe.Session, root string, shards []string, dryRun bool) (deleted, kept []string, err error) {
	switch {
	case sess == nil:
		return nil, nil, ErrNilSession
	case rootdata.ValidateRoot(root) != nil:
		return nil, nil, rootdata.ValidateRoot(root)
	case rootdata.ValidateShards(shards) != nil:
		return nil, nil, rootdata.ValidateShards(shards)
	}
	err = retry.Do(ctx, func() (bool, error) {
		d, k, err := pruneOnce(ctx, sess, root, shards, dryRun)
		deleted, kept = append(deleted, d...), k
		return !recipe.Retryable(err), err
	})
	slices.Sort(deleted)
	return slices.Compact(deleted), kept, err
}

// pruneOnce is one attempt of Prune, over validated arguments.
func pruneOnce(ctx context.Context, sess *recipe.Session, root string, shards []string, dryRun bool) (deleted, kept []string, err error) {
	if err := checkNoOtherList(ctx, sess, root, assign.ListDigest(shards)); err != nil {
		return nil, nil, err
	}
	layout, ids, err := rootdata.ListRoot(ctx, sess, root)
	if err != nil {
		return nil, nil, fmt.Errorf("partition: %w", err)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if slices.Contains(shards, id) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return deleted, kept, err
		}
		switch err := pruneOne(ctx, sess, layout.ShardPath(root, id), dryRun); {
		case errors.Is(err, zk.ErrNotEmpty):
			kept = append(kept, id)
		case err != nil:
			return deleted, kept, err
		default:
			deleted = append(deleted, id)
		}
	}
	return deleted, kept, nil
}

// pruneOne deletes the election at p if it is empty (zk.ErrNotEmpty
// otherwise); with dryRun it only checks.
func pruneOne(ctx context.Context, sess *recipe.Session, p string, dryRun bool) error {
	if !dryRun {
		err := sess.Delete(ctx, p, -1)
		if err != nil && !errors.Is(err, zk.ErrNotEmpty) && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("partition: delete election %s: %w", p, err)
		}
		return err
	}
	_, st, err := sess.Exists(ctx, p)
	switch {
	case err != nil:
		return fmt.Errorf("partition: read election %s: %w", p, err)
	case st != nil && st.NumChildren > 0:
		return zk.ErrNotEmpty
	}
	return nil
}

// checkNoOtherList fails with ErrPruneRefused when a live member under
// root has not published digest as its shard list.
func checkNoOtherList(ctx context.Context, sess *recipe.Session, root, digest string) error {
	dir := path.Join(root, rootdata.MembersDir)
	members, _, err := sess.Children(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("partition: list %s: %w", dir, err)
	}
	for _, m := range members {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, _, err := sess.Get(ctx, path.Join(root, rootdata.OwnersDir, m))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("partition: read record of member %s: %w", m, err)
		}
		r, err := rootdata.DecodeRecord(data)
		switch {
		case err != nil:
			return fmt.Errorf("%w: member %s's record is unreadable (%v)", ErrPruneRefused, m, err)
		case r.ShardSet == "":
			return fmt.Errorf("%w: live member %s has not published its shard list yet (starting, or an earlier release): try again once it runs", ErrPruneRefused, m)
		case r.ShardSet != digest:
			n, _, _ := strings.Cut(r.ShardSet, "-")
			return fmt.Errorf("%w: live member %s runs another shard list (%s shards): stop it or give it the same list first", ErrPruneRefused, m, n)
		}
	}
	return nil
}
