package partition

import (
	"context"
	"fmt"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// This file follows a root from outside the members: one watcher of its
// members, records and operator state feeding a view, for WatchLeaders,
// WatchCluster and Operator's waits.

// checkWatch validates the arguments every follower takes.
func checkWatch(sess *recipe.Session, root string, fnIsNil bool) error {
	if sess == nil {
		return ErrNilSession
	}
	if fnIsNil {
		return ErrNilCallback
	}
	return rootdata.ValidateRoot(root)
}

// followView applies the root's changes to a view and calls step after
// each burst of them, once the members and the operator state have been
// read, until step returns false or an error (returned), ctx is done (nil)
// or sess is closed (an error wrapping recipe.ErrSessionClosed, naming
// what). step runs on the calling goroutine; while it runs, updates wait.
func followView(ctx context.Context, sess *recipe.Session, root, what string, step func(*view) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan update, 64)
	w := newWatcher(sess, root, updates, sess.Logger().With().Str("root", root).Logger())
	w.start(ctx)
	defer w.wait()
	defer cancel()
	v := newView(false)
	var seenMembers, seenOperator bool
	apply := func(u update) {
		seenMembers = seenMembers || u.members != nil
		seenOperator = seenOperator || u.operator != nil
		v.apply(u)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sess.Done():
			return fmt.Errorf("partition: %s %s: %w", what, root, recipe.ErrSessionClosed)
		case u := <-updates:
			apply(u)
		}
		for more := true; more; {
			select {
			case u := <-updates:
				apply(u)
			default:
				more = false
			}
		}
		if !seenMembers || !seenOperator {
			continue
		}
		if more, err := step(v); err != nil || !more {
			return err
		}
	}
}
