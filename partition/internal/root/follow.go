package root

import (
	"context"
	"fmt"

	"github.com/zkelect/zkelect/recipe"
)

// This file follows a root from outside the members: one watcher of its
// members, records and operator state feeding a view, for partition's WatchLeaders
// and WatchCluster and the operator's waits.

// Follow applies the root's changes to a view and calls step after
// each burst of them, once the members and the operator state have been
// read, until step returns false or an error (returned), ctx is done (nil)
// or sess is closed (an error wrapping recipe.ErrSessionClosed, naming
// what). step runs on the calling goroutine; while it runs, updates wait.
//
// It reads within the bounds of a reader without a shard list
// (OutsideBounds); FollowWithin takes others.
func Follow(ctx context.Context, sess *recipe.Session, root, what string, step func(*View) (bool, error)) error {
	outside := OutsideBounds()
	return FollowWithin(ctx, sess, root, what, func() *Bounds { return outside }, step)
}

// FollowWithin is Follow within the bounds that bounds returns at each
// read (Watcher.Within): a reader that runs a shard list gives NewBounds
// of it, and its view holds no claim of another shard.
func FollowWithin(ctx context.Context, sess *recipe.Session, root, what string, bounds func() *Bounds, step func(*View) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan Update, 64)
	w := NewWatcher(sess, root, updates, sess.Logger().With().Str("root", root).Str("follower", what).Logger()).
		Within(bounds, "", nil)
	w.Start(ctx)
	defer w.Wait()
	defer cancel()
	v := NewView(false)
	var seenMembers, seenOperator bool
	apply := func(u Update) {
		seenMembers = seenMembers || u.Members != nil
		seenOperator = seenOperator || u.Operator != nil
		v.Apply(u)
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
