package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
)

// checkIsRoot fails with statusMissing, naming root, when root does not
// exist or is not a partition root (no members znode under it: no shards
// daemon ever ran there), so that an operator verb on a misspelled root
// changes nothing and says so instead of succeeding. A cut from
// ZooKeeper, even past the session timeout, is waited out until ctx ends
// (untilConnected).
func checkIsRoot(ctx context.Context, sess *recipe.Session, root string) error {
	var children []string
	err := untilConnected(ctx, sess, func() (err error) {
		children, _, err = sess.Children(ctx, root)
		return err
	})
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return &exitError{code: statusMissing, err: fmt.Errorf("partition root %s does not exist: check --root (no shards daemon has run there)", root)}
	case err != nil:
		return fmt.Errorf("read partition root %s: %w", root, err)
	case !slices.Contains(children, "members"):
		return &exitError{code: statusMissing, err: fmt.Errorf("%s is not a partition root (no members znode under it): check --root", root)}
	}
	return nil
}

// awaitChildren blocks until the children of path differ from last (path
// created, or a child added or removed), or ctx is done; it returns the
// children it saw. A missing path is waited for with an exists watch.
func awaitChildren(ctx context.Context, sess *recipe.Session, path string, last []string) ([]string, error) {
	wctx, forget := context.WithCancel(ctx)
	defer forget() // removes the watch
	for {
		ok, _, created, err := sess.ExistsW(wctx, path)
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", path, err)
		}
		if !ok {
			select {
			case <-created:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		children, _, changed, err := sess.ChildrenW(wctx, path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue // deleted in between: wait for it again
		case err != nil:
			return nil, fmt.Errorf("watch %s: %w", path, err)
		case !slices.Equal(children, last):
			return children, nil
		}
		select {
		case <-changed:
			children, _, err := sess.Children(ctx, path)
			if err == nil || errors.Is(err, zk.ErrNoNode) {
				return children, nil
			}
			return nil, fmt.Errorf("read %s: %w", path, err)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// untilConnected calls read until it returns nil or an error that is not
// a cut from ZooKeeper (cutOff), or ctx ends (the last error then),
// pausing by a backoff (20 ms doubling to 1 s) that the session's next
// connect ends.
func untilConnected(ctx context.Context, sess *recipe.Session, read func() error) error {
	var b retry.Backoff
	for {
		next := sess.NextConnect()
		err := read()
		if err == nil || ctx.Err() != nil || !cutOff(ctx, sess, err) || !b.WaitOr(ctx, next) {
			return err
		}
	}
}

// cutOff reports whether err, from a read made while ctx lives, came of
// the link to ZooKeeper, which comes back: connection
// loss, the session expired (a new one follows), or a read bounded below
// ctx that ran out while disconnected. Not once the session is closed or
// ended for good.
func cutOff(ctx context.Context, sess *recipe.Session, err error) bool {
	select {
	case <-sess.Done():
		return false
	case <-sess.Ended():
		return false
	default:
	}
	bounded := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && !sess.Connected()
	return recipe.Retryable(err) || errors.Is(err, zk.ErrSessionExpired) || bounded
}
