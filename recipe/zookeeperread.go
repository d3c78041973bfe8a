package recipe

import (
	"context"
	"time"

	"github.com/zkelect/zkelect/internal/retry"
)

// read runs attempt, a read of the session, and asks again, backing off,
// while its answer is transient (Retryable), the session is open, ctx
// lives and less than twice the session timeout has passed since the
// first attempt. It returns the last attempt's error, translated for
// callers (fromLayer).
func (s *Session) read(ctx context.Context, attempt func() error) error {
	deadline := time.Now().Add(2 * s.Timeout())
	var b retry.Backoff
	for {
		err := attempt()
		if !Retryable(err) || s.isClosed() || ctx.Err() != nil {
			return fromLayer(err)
		}
		pause := b.Next()
		if time.Now().Add(pause).After(deadline) || !retry.Sleep(ctx, pause) {
			return fromLayer(err)
		}
	}
}
