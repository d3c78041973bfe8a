package partition

import (
	"context"

	"github.com/zkelect/zkelect/internal/retry"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// backoff spaces out retries after ZooKeeper errors: 50ms doubling to 2s,
// the root's schedule (root.NewBackoff) on the module's one retry shape.
type backoff struct{ b *retry.Backoff }

func newBackoff() *backoff { return &backoff{rootdata.NewBackoff()} }

func (b *backoff) reset() { b.b.Reset() }

// waitOr blocks for the next delay or until ctx is done, and also ends when wake is closed: the session's next
// connect, taken before the attempt that failed (recipe.Session.NextConnect),
// so a call that failed for want of a session is retried the moment the
// new session is there, not after a pause sized for a dead ensemble.
func (b *backoff) waitOr(ctx context.Context, wake <-chan struct{}) { b.b.WaitOr(ctx, wake) }
