package recipe_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
)

// TestRetryLoopsPauseOnceTheSessionIsClosed runs the retry loop of every
// long-running watcher (a round, then a pause by its backoff that the
// session's next connect ends: retry.ForeverWaking with NextConnect) on a
// session closed under it, its own ctx still alive. NextConnect taken
// before Close is closed by it (the waiter wakes to see the end); taken
// after, it never fires, so the loop pauses by its backoff. It was closed
// at once every time: the loop spun, thousands of rounds a second, until
// its ctx ended.
func TestRetryLoopsPauseOnceTheSessionIsClosed(t *testing.T) {
	s := session(t, zkc.ConnectString())
	before := s.NextConnect()
	s.Close()
	select {
	case <-before:
	case <-time.After(wait):
		t.Fatal("NextConnect taken before Close still open after it")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var rounds atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := retry.Backoff{Min: 50 * time.Millisecond, Max: 2 * time.Second}
		retry.ForeverWaking(ctx, &b, s.NextConnect, func() error {
			rounds.Add(1)
			_, _, err := s.Children(ctx, "/")
			return err
		}, func(err error) {
			if !errors.Is(err, recipe.ErrSessionClosed) {
				t.Errorf("a round on a closed session failed with %v, want ErrSessionClosed", err)
			}
		})
	}()
	time.Sleep(time.Second) // the window counted: a pause by the backoff allows at most 5 rounds in it
	cancel()
	<-done
	if n := rounds.Load(); n > 20 {
		t.Errorf("%d rounds in a second on a closed session: the loop spins instead of pausing by its backoff (50ms doubling: at most 5)", n)
	}
}
