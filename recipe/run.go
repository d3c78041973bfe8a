package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkelect/zkelect/zxidfence"
)

// Run campaigns with c, calls fn while c leads, and campaigns again, until
// ctx ends or fn returns an error.
//
// fn receives a context cancelled the moment leadership ends (for whatever
// reason) and the leadership's fencing token; it must stop acting when the
// context is done and pass the token to every protected resource. When fn
// returns while still leading, Run resigns first (so another candidate can
// take over at once) and then campaigns again if fn returned nil. Run never
// calls fn twice at the same time.
//
// Run returns fn's error (after resigning), or ctx's error when ctx ends
// (after resigning with a fresh deadline: the close timeout), or an error
// from Campaign such as ErrClosed.
func Run(ctx context.Context, c *Candidate, fn func(ctx context.Context, token zxidfence.Token) error) error {
	if c == nil {
		return fmt.Errorf("run: %w", ErrInvalidOption)
	}
	for {
		lead, err := c.Campaign(ctx)
		if err != nil {
			return err
		}
		fnErr := runTerm(ctx, lead, fn)
		if lead.Leading() || ctx.Err() != nil || fnErr != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.closeTimeout)
			rerr := lead.Resign(rctx)
			cancel()
			if rerr != nil && !errors.Is(rerr, ErrCleanupIncomplete) {
				return rerr
			}
		}
		switch {
		case fnErr != nil:
			return fnErr
		case ctx.Err() != nil:
			return context.Cause(ctx)
		}
	}
}

// runTerm calls fn for one leadership, with a context that ends when the
// leadership or ctx ends.
func runTerm(ctx context.Context, lead *Leadership, fn func(context.Context, zxidfence.Token) error) error {
	tctx, cancel := context.WithCancelCause(lead.Context())
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stop()
	return fn(tctx, lead.Token())
}
