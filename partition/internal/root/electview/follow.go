package electview

import (
	"context"
	"fmt"
	"time"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// Follow follows root from outside its members: the live members, their
// records and the operator state (rootdata's watcher, for metadata) and
// every election (for leaders). It calls step after each burst of
// changes, once the members, the operator state and every election have
// been read, until step returns false or an error (returned), ctx is done
// (nil) or sess is closed (an error wrapping recipe.ErrSessionClosed,
// naming what). step runs on the calling goroutine; while it runs,
// changes wait. It fails at the start if the watch is refused (a server
// before ZooKeeper 3.6, an ACL) or the root cannot be listed for a reason
// other than the connection: a start cut off from ZooKeeper, even past
// the session timeout, waits for the session to connect again.
//
// It reads the records within the bounds of a reader without a shard list
// (rootdata.OutsideBounds); FollowWithin takes others.
func Follow(ctx context.Context, sess *recipe.Session, root, what string, step func(*rootdata.View, *Elections) (bool, error)) error {
	outside := rootdata.OutsideBounds()
	return FollowWithin(ctx, sess, root, what, func() *rootdata.Bounds { return outside }, step)
}

// FollowWithin is Follow reading the members and records within the
// bounds that bounds returns at each read (rootdata.Watcher.Within).
func FollowWithin(ctx context.Context, sess *recipe.Session, root, what string, bounds func() *rootdata.Bounds, step func(*rootdata.View, *Elections) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e := newElections(sess, root, sess.Logger().With().Str("root", root).Logger())
	defer e.stop()
	defer cancel()
	if err := e.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	updates := make(chan rootdata.Update, 64)
	w := rootdata.NewWatcher(sess, root, updates, sess.Logger().With().Str("root", root).Str("follower", what).Logger()).
		Within(bounds, "", nil)
	w.Start(ctx)
	defer w.Wait()
	defer cancel()
	v := rootdata.NewView(false)
	var seenMembers, seenOperator, stepped, pending bool
	var nextStep time.Time   // paced: see minStepGap
	var gap <-chan time.Time // fires at nextStep while a step waits for it
	apply := func(u rootdata.Update) {
		seenMembers = seenMembers || u.Members != nil
		seenOperator = seenOperator || u.Operator != nil
		v.Apply(u)
	}
	for {
		e.dispatch(ctx)
		viewChanged := false
		select {
		case <-ctx.Done():
			return nil
		case <-sess.Done():
			return fmt.Errorf("partition: %s %s: %w", what, root, recipe.ErrSessionClosed)
		case <-sess.Ended():
			return fmt.Errorf("partition: %s %s: the session ended for good: %w", what, root, sess.EndErr())
		case err := <-e.pumpErr:
			return fmt.Errorf("partition: %s %s: %w", what, root, err)
		case u := <-updates:
			apply(u)
			viewChanged = true
		case b := <-e.batches:
			if err := e.apply(ctx, b); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("partition: %s %s: %w", what, root, err)
			}
		case r := <-e.results:
			e.done(r)
		case <-gap:
			gap = nil
		}
		for more := true; more; { // the rest of the burst
			select {
			case u := <-updates:
				apply(u)
				viewChanged = true
			case r := <-e.results:
				e.done(r)
			default:
				more = false
			}
		}
		e.sync.set(e.conn, e.caughtUp())
		if e.take() || viewChanged {
			pending = true
		}
		if !seenMembers || !seenOperator || !stepped && !e.settled() || stepped && !pending {
			continue
		}
		if wait := time.Until(nextStep); wait > 0 {
			if gap == nil {
				gap = time.After(wait)
			}
			continue
		}
		stepped, pending = true, false
		begin := time.Now()
		if more, err := step(v, e); err != nil || !more {
			return err
		}
		e.forgetTaken()
		nextStep = time.Now().Add(max(minStepGap, 2*time.Since(begin)))
	}
}

// minStepGap is the least time between two steps of Follow. A step costs
// the size of the root (a picture of every shard), so while changes come
// faster than that (a member's thousands of shards moving) they are
// taken together: the next step waits twice the last one's cost, at least
// minStepGap, which bounds the share of a core the steps take to a third
// and adds at most that wait to the view's lag.
const minStepGap = 2 * time.Millisecond

// Read reads every election of root once and returns each led shard's
// leader, without a watch. Errors: the listing's or a read's, wrapped
// with the path, or ctx's.
func Read(ctx context.Context, sess *recipe.Session, root string) (map[string]Leader, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e := newElections(sess, root, sess.Logger())
	defer e.wg.Wait()
	defer cancel()
	if err := e.relist(ctx); err != nil {
		return nil, err
	}
	for !e.settled() {
		e.dispatch(ctx)
		select {
		case r := <-e.results:
			for _, w := range r.wholes {
				if w.err != nil {
					return nil, fmt.Errorf("partition: read election %s: %w", w.path, w.err)
				}
			}
			e.done(r)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return e.Leaders(), nil
}
