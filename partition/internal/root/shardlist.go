package root

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// This file reads a root's layout and lists its shards' elections through
// it: every listing of the shards (status, Owners, prune, the start's
// missing-election check) goes through ListShards.

// ReadLayout reads the layout of root from the data of <root>/buckets,
// Flat when there is none but a <root>/shards (see Layout). It returns an
// error wrapping zk.ErrNoNode when the root has neither yet,
// ErrUnknownLayout for data this release cannot read, and ZooKeeper's
// other errors wrapped with the path.
func ReadLayout(ctx context.Context, sess *recipe.Session, root string) (Layout, error) {
	p := BucketsPath(root)
	data, _, err := sess.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		// <root>/shards and <root>/buckets are created together: read
		// after the buckets' absence, shards proves the root flat.
		if ok, _, xerr := sess.Exists(ctx, ShardsPath(root)); xerr != nil || !ok {
			if xerr == nil {
				xerr = zk.ErrNoNode
			}
			return Layout{}, fmt.Errorf("read %s: %w", ShardsPath(root), xerr)
		}
		return Flat, nil
	}
	if err != nil {
		return Layout{}, fmt.Errorf("read %s: %w", p, err)
	}
	l, err := DecodeLayout(data)
	if err != nil {
		return Layout{}, fmt.Errorf("read %s: %w", p, err)
	}
	return l, nil
}

// listParallel bounds the buckets ListShards lists at once: one round
// trip lists that many, so 1,024 buckets take 32 round trips.
const listParallel = 32

// ListShards returns the ids of every shard with an election under root,
// unsorted: the children of <root>/shards (flat), or of each bucket under
// <root>/buckets (one getChildren per bucket, listParallel in flight, each
// within jute.maxbuffer as CheckListing bounds them). A child of
// <root>/buckets that is not a bucket is not listed, nor, in a bucketed
// root, an election under <root>/shards (an older release's: see
// StrayElections). A root without the znode is an error wrapping
// zk.ErrNoNode; a bucket deleted meanwhile lists nothing.
func (l Layout) ListShards(ctx context.Context, sess *recipe.Session, root string) ([]string, error) {
	dir := l.dir(root)
	children, _, err := sess.Children(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if !l.Bucketed() {
		return children, nil
	}
	buckets := slices.DeleteFunc(children, func(b string) bool { return !l.isBucket(b) })
	lists := make([][]string, len(buckets))
	errs := make([]error, len(buckets))
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i, b := range buckets {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			p := path.Join(dir, b)
			in, _, err := sess.Children(ctx, p)
			switch {
			case errors.Is(err, zk.ErrNoNode):
			case err != nil:
				errs[i] = fmt.Errorf("list %s: %w", p, err)
			default:
				lists[i] = in
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first bucket's failure, not one error a bucket
		}
	}
	return slices.Concat(lists...), nil
}

// ListRoot reads root's layout and lists its shards (ListShards). A root
// without a shards znode lists nothing, with no error.
func ListRoot(ctx context.Context, sess *recipe.Session, root string) (Layout, []string, error) {
	l, err := ReadLayout(ctx, sess, root)
	if errors.Is(err, zk.ErrNoNode) {
		return Flat, nil, nil
	}
	if err != nil {
		return Layout{}, nil, err
	}
	ids, err := l.ListShards(ctx, sess, root)
	if errors.Is(err, zk.ErrNoNode) {
		return l, nil, nil
	}
	return l, ids, err
}

// StrayElections returns the shard elections under <root>/shards of a
// bucketed root, sorted: a bucketed root's members never campaign there,
// so each is an older release's (it does not read the layout and
// campaigns beside the bucketed election: the shard may have two
// leaders) or a tool's. A flat root has none.
func (l Layout) StrayElections(ctx context.Context, sess *recipe.Session, root string) ([]string, error) {
	if !l.Bucketed() {
		return nil, nil
	}
	p := ShardsPath(root)
	ids, _, err := sess.Children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	slices.Sort(ids)
	return ids, nil
}
