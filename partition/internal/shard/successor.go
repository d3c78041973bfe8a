package shard

import (
	"context"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// A leadership is handed off (or a withdrawal ends it) only once the target
// member's candidate waits in the shard's election behind it, so the shard
// passes straight to a member that campaigns for it. The successor may not
// be there yet when the handoff is asked: the target starts its elections
// one after another (thousands when it joins), each as soon as it sees the
// assignment. The runner then waits for it where it is, on a child watch of
// the election, instead of giving the handoff back at once: a handoff given
// back waits out the settle delay and the loop's next step before it is
// asked again (seconds at 100,000 shards), and the target's candidate
// usually joins a few milliseconds after the watch is set. The wait is
// bounded by HandoffTimeout; a successor still missing then defers the
// handoff (Deferred), as a target that never campaigns must not hold a
// handoff slot for longer.

// retargetCheck is how often a wait for a successor looks whether the
// assignment moved the shard to yet another member (the loop's
// assignment, in memory): a target that never campaigns (its process
// wedged while its session lives) must not hold the handoff for all of
// HandoffTimeout once the shard is dealt elsewhere.
const retargetCheck = 100 * time.Millisecond

// successorWait is how a wait for a successor ended.
type successorWait uint8

const (
	successorReady       successorWait = iota // its candidate waits in the election: hand off
	successorMissing                          // none after HandoffTimeout (or the read failed): defer
	successorInterrupted                      // the leadership ended, or the runner was stopped or withdrawn
)

// awaitSuccessor waits, at most HandoffTimeout, until member to has a
// candidate waiting in the election of the runner's shard while the shard
// is still assigned to it. Each listing that misses it arms a child watch
// and lists again (the candidate may have joined between the two), then
// waits for the election to change; the watch and the reads go on the
// member's primary session (one server's view, in order). Called by the
// runner's goroutine while it leads.
func (r *Runner) awaitSuccessor(to string) successorWait {
	ctx, done := r.holdContext(r.m.HandoffTimeout)
	defer done()
	path := r.m.Env.ElectionPath(r.id)
	var watch <-chan zk.Event
	for {
		if r.m.Env.TargetOf(r.id) != to {
			return successorMissing // assigned elsewhere again: the loop decides anew
		}
		queued, err := r.successorQueued(ctx, path, to)
		switch {
		case queued:
			return successorReady
		case err != nil:
			return r.waitEnd(ctx)
		case watch != nil:
			if !r.awaitChange(ctx, watch, to) {
				return r.waitEnd(ctx)
			}
			watch = nil
			continue
		}
		if _, _, watch, err = r.m.Primary.ChildrenW(ctx, path); err != nil {
			if ctx.Err() == nil {
				r.m.Log.Warn().Err(err).Str("shard", r.id).Msg("watch election before handoff")
			}
			return r.waitEnd(ctx)
		}
	}
}

// awaitChange waits for the election to change (watch fires): true then;
// false once ctx ends or the shard is assigned to another member than to
// (looked at every retargetCheck).
func (r *Runner) awaitChange(ctx context.Context, watch <-chan zk.Event, to string) bool {
	tick := time.NewTicker(retargetCheck)
	defer tick.Stop()
	for {
		select {
		case <-watch:
			return true
		case <-ctx.Done():
			return false
		case <-tick.C:
			if r.m.Env.TargetOf(r.id) != to {
				return false
			}
		}
	}
}

// waitEnd tells why a wait for a successor ended without one: interrupted
// (the leadership ended, or the runner was stopped or withdrawn), or the
// successor is missing (HandoffTimeout passed, or a read failed).
func (r *Runner) waitEnd(ctx context.Context) successorWait {
	if r.held.lead.Err() != nil || r.Stopping() {
		return successorInterrupted
	}
	if ctx.Err() != nil {
		r.m.Log.Debug().Str("shard", r.id).Dur("handoff_timeout", r.m.HandoffTimeout).
			Msg("handoff deferred: successor not campaigning yet")
	}
	return successorMissing
}

// successorQueued reports whether member to has a candidate waiting in
// the election at path behind the runner's leadership (one listing and a
// read of each waiting candidate's znode); a failed read is logged unless
// ctx ended.
func (r *Runner) successorQueued(ctx context.Context, path, to string) (bool, error) {
	ps, err := recipe.Successors(ctx, r.m.Primary, path, r.held.lead.Znode())
	if err != nil {
		if ctx.Err() == nil {
			r.m.Log.Warn().Err(err).Str("shard", r.id).Msg("read election before handoff")
		}
		return false, err
	}
	for _, p := range ps {
		if p.ID == to {
			return true, nil
		}
	}
	return false, nil
}

// holdContext returns a context for a wait while the runner leads: it ends
// with the leadership, when the runner is stopped or withdrawn (interrupt
// cancels it, as it cancels a campaign's), or after d (never for d 0); done
// drops it, and the runner again keeps no context while it leads.
func (r *Runner) holdContext(d time.Duration) (ctx context.Context, done func()) {
	var cancel context.CancelFunc
	if d > 0 {
		ctx, cancel = context.WithTimeout(r.held.lead.Context(), d)
	} else {
		ctx, cancel = context.WithCancel(r.held.lead.Context())
	}
	r.mu.Lock()
	r.ctx, r.cancel = ctx, cancel
	if r.reason != nil || r.withdrawing {
		cancel()
	}
	r.mu.Unlock()
	return ctx, r.closeContext
}
