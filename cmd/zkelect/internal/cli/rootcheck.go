package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// checkIsRoot fails with statusMissing, naming root, when root does not
// exist or is not a partition root (no members znode under it: no shards
// daemon ever ran there), so that an operator verb on a misspelled root
// changes nothing and says so instead of succeeding.
func checkIsRoot(ctx context.Context, sess *recipe.Session, root string) error {
	children, _, err := sess.Children(ctx, root)
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
