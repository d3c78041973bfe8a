package recipe_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
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

// TestRunStartedWhileCutOffLeadsOnceTheSessionIsBack starts Run (and so
// a candidate's first create) while its session is cut off from
// ZooKeeper past the session timeout, expired by the server: the create
// fails with the expired session's error before it is sent. Run must
// not return it: it campaigns on the new session once the link heals and
// calls fn with a token of that session's znode.
func TestRunStartedWhileCutOffLeadsOnceTheSessionIsBack(t *testing.T) {
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	p.Blackhole()
	p.Cut()
	eventually(t, "the session disconnected", func() bool { return !s.Connected() })
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), s.Conn()); err != nil {
		t.Fatalf("expire the session: %v", err)
	}
	c := candidate(t, s, electionPath(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	led := make(chan zxidfence.Token, 1)
	done := make(chan error, 1)
	go func() {
		done <- recipe.Run(ctx, c, func(ctx context.Context, tok zxidfence.Token) error {
			select {
			case led <- tok:
			default:
			}
			<-ctx.Done()
			return nil
		})
	}()
	select { // past the reads' own retries (twice the session timeout)
	case err := <-done:
		t.Fatalf("Run returned while cut off: %v", err)
	case <-led:
		t.Fatal("led while cut off")
	case <-time.After(3 * s.Timeout()):
	}
	p.Heal()
	select {
	case err := <-done:
		t.Fatalf("Run returned once healed: %v", err)
	case tok := <-led:
		if tok == 0 {
			t.Error("led with a zero token")
		}
	case <-time.After(wait):
		t.Fatalf("not leading %v after the link healed", wait)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run once cancelled = %v, want context.Canceled", err)
	}
}
