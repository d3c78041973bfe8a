package cli

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// awaitRecords blocks until the member records under dir (a root's
// owners/) differ from last, or, when last names one, until that record's
// data changes, as a member's does when it publishes the shards it leads;
// it returns the records then. Waiting on the records rather than on the
// shards' parent works for every layout: in a bucketed root the elections
// appear under 1,024 buckets, and <root>/shards stays empty. It returns
// ctx's error if ctx ends first, and an error naming dir if ZooKeeper
// refuses the reads.
func awaitRecords(ctx context.Context, sess *recipe.Session, dir string, last []string) ([]string, error) {
	if len(last) == 0 {
		return awaitChildren(ctx, sess, dir, last)
	}
	wctx, forget := context.WithCancel(ctx)
	defer forget() // removes the watches
	children, _, added, err := sess.ChildrenW(wctx, dir)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err != nil || !slices.Equal(children, last) {
		return children, nil
	}
	_, _, written, err := sess.GetW(wctx, path.Join(dir, last[0]))
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("watch %s: %w", path.Join(dir, last[0]), err)
	}
	if err != nil {
		return nil, nil // the record went in between: look again
	}
	select {
	case <-added:
	case <-written:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return children, nil
}
