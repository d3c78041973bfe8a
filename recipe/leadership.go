package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/zxidfence"
)

// Leadership is one term of a candidate as leader. It ends exactly once, for
// a reason Err reports; its Context is cancelled at that moment (Done is the
// context's Done channel, so both are one event). Leadership can be lost at
// any time: watch Done or the Context, and pass Token to every protected
// resource.
type Leadership struct {
	c         *Candidate
	token     zxidfence.Token
	znode     string
	version   int32
	sessionID int64
	ctx       context.Context
	cancel    context.CancelCauseFunc

	mu      sync.Mutex
	reason  error         // the final reason, once settled
	pending bool          // ended while its session may already have expired
	settled chan struct{} // closed once the reason is final; made by the first Reason to wait
}

func newLeadership(c *Candidate, token zxidfence.Token, znode string, version int32, sessionID int64) *Leadership {
	l := &Leadership{c: c, token: token, znode: znode, version: version, sessionID: sessionID}
	l.ctx, l.cancel = context.WithCancelCause(context.WithValue(context.Background(), leadershipKey{}, l))
	return l
}

// Token returns the fencing token: the czxid of the leader's znode. Every
// later leadership of the same election holds a strictly larger one.
func (l *Leadership) Token() zxidfence.Token { return l.token }

// Znode returns the full path of the leader's znode.
func (l *Leadership) Znode() string { return l.znode }

// Version returns the data version of the leader's znode when leadership
// was taken, for a multi that checks it (zxidfence's ZooKeeper guard).
func (l *Leadership) Version() int32 { return l.version }

// SessionID returns the ZooKeeper session that owns the leader's znode.
func (l *Leadership) SessionID() int64 { return l.sessionID }

// Context returns a context cancelled the moment leadership ends; its cause
// (context.Cause) is the reason known at that moment (see Reason).
// LeadershipFrom returns l from it and from every context derived from it.
func (l *Leadership) Context() context.Context { return l.ctx }

// Done returns a channel closed the moment leadership ends (the Context's
// Done channel).
func (l *Leadership) Done() <-chan struct{} { return l.ctx.Done() }

// Err returns nil while leading, then why leadership ended: an error
// matching one of ErrResigned, ErrClosed, ErrSessionExpired, ErrSuspended or
// ErrZnodeDeleted with errors.Is. It does not wait: while the reason is
// still open (see Reason) it returns ErrSuspended.
func (l *Leadership) Err() error {
	if l.ctx.Err() == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reason != nil {
		return l.reason
	}
	return context.Cause(l.ctx)
}

// Reason waits until the leadership has ended and why is known, and
// returns it (as Err then does). The reason is known the moment leadership
// ends, with one exception: a leadership whose local lease ran out after
// its session could already have expired (the process was paused, or
// starved, past the session timeout, so ZooKeeper may have deleted the
// znode meanwhile) ends at once with its reason open, and the reason
// becomes ErrSessionExpired when the candidate learns the session expired,
// or ErrSuspended when the session turns out alive (it reconnects, or
// answers again) or the candidate is closed first. When ctx ends first,
// Reason returns the reason known so far (ErrSuspended), or nil while still
// leading.
func (l *Leadership) Reason(ctx context.Context) error {
	l.mu.Lock()
	settled := l.settledLocked()
	l.mu.Unlock()
	select {
	case <-settled:
	case <-l.ctx.Done():
		select {
		case <-settled:
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	return l.Err()
}

// Leading reports whether the leadership has not ended yet. It is only
// advice: leadership may end right after it returns.
func (l *Leadership) Leading() bool { return l.ctx.Err() == nil }

// Resign ends the leadership (reason ErrResigned) and withdraws the
// candidate from the election: its znode is deleted, retried on connection
// loss until it succeeds or the session is gone. Leadership ends before
// Resign returns, whatever ctx does. Resign returns nil once the deletion is
// confirmed; if ctx ends first it returns an error wrapping
// ErrCleanupIncomplete and ctx's error while the candidate keeps retrying.
// The candidate may Campaign again. Resigning an ended leadership withdraws
// the candidate too, unless it already leads again or a Campaign is waiting.
func (l *Leadership) Resign(ctx context.Context) error {
	l.end(ErrResigned)
	req := &resignReq{lead: l, reply: make(chan error, 1)}
	if !l.c.mb.post(req) {
		return nil // the candidate is closed: its znode is gone or going
	}
	select {
	case err := <-req.reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("resign %s: %w: %w", l.znode, ErrCleanupIncomplete, ctx.Err())
	}
}

// end ends the leadership for reason (first call wins) and settles the
// reason.
func (l *Leadership) end(reason error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return
	}
	l.cancel(reason)
	l.settleLocked(reason)
}

// endOpen ends the leadership for reason (first call wins), leaving the
// reason open until settle: its session may already have expired.
func (l *Leadership) endOpen(reason error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return
	}
	l.cancel(reason)
	l.pending = true
}

// settle makes an open reason final: reason, or the one it ended with when
// reason is nil. It does nothing to a reason already final.
func (l *Leadership) settle(reason error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.pending {
		return
	}
	if reason == nil {
		reason = context.Cause(l.ctx)
	}
	l.settleLocked(reason)
}

func (l *Leadership) settleLocked(reason error) {
	l.pending = false
	if l.reason == nil {
		l.reason = reason
		if l.settled != nil {
			close(l.settled)
		}
	}
}

// settledLocked returns a channel closed once the reason is final (l.mu
// held). Most leaderships end with their reason final and nobody waiting:
// they never make one.
func (l *Leadership) settledLocked() <-chan struct{} {
	if l.settled == nil {
		l.settled = make(chan struct{})
		if l.reason != nil {
			close(l.settled)
		}
	}
	return l.settled
}

// open reports whether the leadership ended with its reason still open.
func (l *Leadership) open() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pending
}

// leadershipKey is the context key of the Leadership a context belongs to.
type leadershipKey struct{}

// LeadershipFrom returns the Leadership whose Context ctx is or derives
// from, and whether there is one: code handed only a context (a
// partition.Config.OnStartedLeading callback, for example) reaches the
// leader's znode and its version, which zxidfence's ZooKeeper guard checks
// (zxidfence.LeaderOf(lead, gen)), as well as the token.
func LeadershipFrom(ctx context.Context) (*Leadership, bool) {
	l, ok := ctx.Value(leadershipKey{}).(*Leadership)
	return l, ok && l != nil
}

// Run's pause between terms whose fn returned nil while still leading: it
// starts at MinRunBackoff, doubles up to MaxRunBackoff, and starts over after
// a term that lasted MaxRunBackoff or longer. A job that finishes at once
// must not spin creating and deleting znodes. A term that ends because the
// leadership was lost is followed by a new campaign at once.
const (
	MinRunBackoff = 100 * time.Millisecond
	MaxRunBackoff = 10 * time.Second
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
// from Campaign such as ErrClosed. A nil c or fn is an *OptionError naming
// it (errors.Is ErrInvalidOption).
func Run(ctx context.Context, c *Candidate, fn func(ctx context.Context, token zxidfence.Token) error) error {
	switch {
	case c == nil:
		return &OptionError{Option: "Run candidate", Reason: "nil *Candidate"}
	case fn == nil:
		return &OptionError{Option: "Run fn", Reason: "nil function"}
	}
	backoff := retry.Backoff{Min: MinRunBackoff, Max: MaxRunBackoff}
	for {
		lead, err := c.Campaign(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		fnErr := runTerm(ctx, lead, fn)
		voluntary := lead.Leading()
		if voluntary || ctx.Err() != nil || fnErr != nil {
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
		case voluntary:
			if time.Since(start) >= MaxRunBackoff {
				backoff.Reset()
			}
			if !backoff.Wait(ctx) {
				return context.Cause(ctx)
			}
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
