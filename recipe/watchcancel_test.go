package recipe_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// lateCancel is a context that ends during its n-th Err call, which still
// reports nil: as if it ended just after the caller checked it. Before it
// returns, the goroutines the cancel woke (the context's AfterFunc hooks)
// get the processor for a while.
type lateCancel struct {
	context.Context
	cancel context.CancelFunc
	n      atomic.Int32
}

func newLateCancel(parent context.Context, n int32) *lateCancel {
	ctx, cancel := context.WithCancel(parent)
	c := &lateCancel{Context: ctx, cancel: cancel}
	c.n.Store(n)
	return c
}

func (c *lateCancel) Err() error {
	if c.n.Add(-1) != 0 {
		return c.Context.Err()
	}
	c.cancel()
	for range 200 {
		runtime.Gosched()
	}
	return nil
}

// TestCancelledWatchedReadsLeaveNoWatch ends GetW's context at each of its
// checks in turn, from several goroutines, each read on a path of its own: a context that ends after the
// read checked it but before its request is on the wire must not leave the
// watch that request sets on the server (the removal written when the
// context ended would go out ahead of the request).
func TestCancelledWatchedReadsLeaveNoWatch(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	dir := watchPath(t, raw)
	const workers, rounds, checks = 4, 10, 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds * checks {
				// A path of its own: a later read's removal would also
				// clear a watch left on a shared one.
				p := fmt.Sprintf("%s/w%d-%d", dir, w, i)
				mustCreate(t, raw, p, []byte("x"))
				ctx := newLateCancel(t.Context(), int32(1+i%checks))
				_, _, _, _ = s.GetW(ctx, p) // ctx's error or a watch: both fine
				ctx.cancel()
			}
		})
	}
	wg.Wait()
	await(t, "no watch left", func() string {
		if left := serverWatches(t.Context(), t, zkc, dir)[s.ID()]; len(left) > 0 {
			return fmt.Sprintf("%d of %d reads left a watch, first %s", len(left), workers*rounds*checks, left[0])
		}
		return ""
	})
}
