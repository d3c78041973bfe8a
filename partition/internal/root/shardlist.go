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

// ReadLayout reads the layout of root from the data of <root>/shards (see
// Layout). It returns an error wrapping zk.ErrNoNode when the root has no
// shards znode yet, ErrUnknownLayout for data this release cannot read,
// and ZooKeeper's other errors wrapped with the path.
func ReadLayout(ctx context.Context, sess *recipe.Session, root string) (Layout, error) {
	p := ShardsPath(root)
	data, _, err := sess.Get(ctx, p)
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
// unsorted: the children of <root>/shards (flat), or of each of its
// buckets (one getChildren per bucket, listParallel in flight, each within
// jute.maxbuffer as CheckListing bounds them). A child of a bucketed
// <root>/shards that is not a bucket (an election an older release made
// there) is not listed. A root without a shards znode is an error
// wrapping zk.ErrNoNode; a bucket deleted meanwhile lists nothing.
func (l Layout) ListShards(ctx context.Context, sess *recipe.Session, root string) ([]string, error) {
	dir := ShardsPath(root)
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
