package partition

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file runs the election of one shard: campaign, pass the shard on if
// it is no longer assigned here, lead, hand off.

// slotHold is how long an election start holds one of the MaxInFlight
// slots when its campaign does not return sooner (it is queued behind a
// sitting leader): long enough for its requests to have been answered on a
// loaded session, short enough not to stall the next starts.
const slotHold = 250 * time.Millisecond

// errWithdrawn is the internal stop reason of a candidate that is not
// leading and no longer assigned here.
var errWithdrawn = errors.New("partition: not assigned here")

// runner is one shard's election in this member. The loop owns its fields
// except those under mu.
type runner struct {
	id      string
	ctx     context.Context
	cancel  context.CancelFunc
	handoff bool      // a handoff was asked: counts against the throttle
	removed bool      // stopped because the shard was removed
	stopAt  time.Time // when the handoff was asked

	handoffReq chan string // the member to hand the leadership to, capacity 1

	mu     sync.Mutex
	reason error // why it was stopped; nil while it runs
}

func newRunner(base context.Context, id string) *runner {
	ctx, cancel := context.WithCancel(base)
	return &runner{id: id, ctx: ctx, cancel: cancel, handoffReq: make(chan string, 1)}
}

// stop asks the runner to end for reason.
func (r *runner) stop(reason error) {
	r.mu.Lock()
	if r.reason == nil {
		r.reason = reason
	}
	r.mu.Unlock()
	r.cancel()
}

func (r *runner) stopping() bool { return r.stopReason() != nil }

func (r *runner) stopReason() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

// minCloseTimeout is the shortest wait for a closing candidate's znode
// deletion: a connected server answers far sooner even under load.
const minCloseTimeout = time.Second

// closeTimeout bounds how long closing a shard's candidate waits to confirm
// its znode's deletion: half the session timeout, at least minCloseTimeout.
// Cut off from the ensemble the znode goes with the session anyway (and the
// deletion is retried meanwhile), so a member stopped while cut off exits
// within about a session timeout, not the library's default of 2 x 10s.
func closeTimeout(session time.Duration) time.Duration {
	return max(session/2, minCloseTimeout)
}

// runShard campaigns until the runner is stopped, leading whenever it wins
// while the shard is assigned here.
func (l *loop) runShard(r *runner) {
	seat := l.takeSeat(r)
	if seat == nil {
		return
	}
	defer l.m.pool.leave(seat) // after the candidate's Close
	cand, err := recipe.NewCandidate(seat.sess, l.m.shardPath(r.id), recipe.WithParticipantID(l.m.cfg.MemberID),
		recipe.WithCloseTimeout(closeTimeout(seat.sess.Timeout())), recipe.WithMetricsLabel(l.m.shardsLabel()),
		recipe.WithACL(l.m.cfg.ACL), recipe.WithNaming(l.m.naming), recipe.WithBatchedCreates())
	if err != nil {
		l.m.log.Error().Err(err).Str("shard", r.id).Msg("create candidate")
		return
	}
	defer func() {
		if err := cand.Close(); err != nil {
			l.m.log.Warn().Err(err).Str("shard", r.id).Msg("close candidate")
		}
	}()
	retry := newBackoff()
	for r.ctx.Err() == nil {
		lead, err := l.campaign(r, seat, cand)
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, recipe.ErrSessionClosed) || errors.Is(err, recipe.ErrClosed) {
				return
			}
			l.m.log.Warn().Err(err).Str("shard", r.id).Msg("campaign")
			retry.wait(r.ctx)
			continue
		}
		retry.reset()
		if r.ctx.Err() != nil || !l.m.assignedToMe(r.id) {
			l.passOn(r, lead)
			return
		}
		l.lead(r, lead)
	}
}

// takeSeat places the runner's election on one of the member's sessions,
// retrying with backoff while a sibling session cannot be opened; it
// returns nil once the runner is stopped or the member's sessions closed.
func (l *loop) takeSeat(r *runner) *seat {
	retry := newBackoff()
	for {
		seat, err := l.m.pool.place(r.ctx)
		if err == nil {
			return seat
		}
		if r.ctx.Err() != nil || errors.Is(err, recipe.ErrSessionClosed) {
			return nil
		}
		l.m.log.Warn().Err(err).Str("shard", r.id).Msg("place election on a session")
		retry.wait(r.ctx)
	}
}

// campaign runs one Campaign while holding one of its session's
// MaxInFlight election-start slots, given back when Campaign returns or
// slotHold passes.
func (l *loop) campaign(r *runner, seat *seat, cand *recipe.Candidate) (*recipe.Leadership, error) {
	if !seat.starts.acquire(r.ctx) {
		return nil, r.ctx.Err()
	}
	var once sync.Once
	release := func() { once.Do(seat.starts.release) }
	t := time.AfterFunc(slotHold, release)
	defer func() { t.Stop(); release() }()
	return cand.Campaign(r.ctx)
}

// passOn resigns a leadership won while the shard is assigned elsewhere,
// before any callback runs.
func (l *loop) passOn(r *runner, lead *recipe.Leadership) {
	l.m.met.passedOn.Inc()
	l.resign(r, lead)
}

// lead hands the leadership to OnStartedLeading and waits until it ends or
// the runner is stopped. Then it cancels the callback's context, waits for
// the callback to return (at most HandoffTimeout), calls OnStoppedLeading,
// and only then resigns: demote before promote.
func (l *loop) lead(r *runner, lead *recipe.Leadership) {
	token := lead.Token()
	l.m.setLeading(r.id, lead)
	l.m.met.started.Inc()
	l.report(r, evStarted, uint64(token))
	l.m.log.Debug().Str("shard", r.id).Stringer("token", token).Msg("leading")

	work, cancelWork := context.WithCancel(lead.Context())
	returned := l.callStarted(work, r.id, token)
	reason := l.hold(r, lead)
	cancelWork()
	l.m.clearLeading(r.id)
	l.awaitCallback(r.id, returned)
	reason = l.finalReason(lead, reason)
	if f := l.m.cfg.OnStoppedLeading; f != nil {
		f(r.id, reason)
	}
	l.m.met.stopped.WithLabelValues(reasonLabel(reason)).Inc()
	if errors.Is(reason, recipe.ErrSuspended) && r.ctx.Err() == nil {
		l.report(r, evSuspended, 0) // the record keeps the shard: see holdSuspended
	} else {
		l.reportStopped(r, reason)
	}
	l.m.log.Debug().Str("shard", r.id).Stringer("token", token).AnErr("reason", reason).Msg("stopped leading")
	if lead.Err() == nil {
		l.resign(r, lead)
	}
}

// hold waits until the leadership ends, the runner is stopped, or a
// handoff finds its successor waiting in the election, and returns why the
// leadership ends. A handoff whose successor is not queued (yet) is
// deferred: the leadership goes on and the loop asks again later, so a
// shard is never resigned to a member that does not campaign for it.
func (l *loop) hold(r *runner, lead *recipe.Leadership) error {
	for {
		select {
		case <-lead.Done():
			return lead.Err()
		case <-r.ctx.Done():
			if err := lead.Err(); err != nil {
				return err // lost (expiry, deletion, suspension) wins over our own stop
			}
			return r.stopReason()
		case to := <-r.handoffReq:
			if l.m.targetOf(r.id) == to && l.successorQueued(r.id, to) {
				r.stop(ErrHandoff)
				if err := lead.Err(); err != nil {
					return err
				}
				return ErrHandoff
			}
			l.report(r, evDeferred, 0)
		}
	}
}

// finalReason returns the final reason of a leadership that was lost: one
// lost after its session could already have expired waits (at most
// HandoffTimeout) to learn whether it did (recipe's Leadership.Reason).
// Our own reasons (a handoff, a stop) are returned as they are.
func (l *loop) finalReason(lead *recipe.Leadership, reason error) error {
	if lead.Err() == nil || errors.Is(reason, ErrHandoff) || errors.Is(reason, ErrShardRemoved) || errors.Is(reason, ErrStopping) {
		return reason
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.m.cfg.HandoffTimeout)
	defer cancel()
	return lead.Reason(ctx)
}

// successorQueued reports whether member to has a candidate in the
// election of shard.
func (l *loop) successorQueued(shard, to string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), l.m.cfg.HandoffTimeout)
	defer cancel()
	ps, err := recipe.Participants(ctx, l.m.sess, l.m.shardPath(shard))
	if err != nil {
		l.m.log.Warn().Err(err).Str("shard", shard).Msg("read election before handoff")
		return false
	}
	for _, p := range ps {
		if p.ID == to && !p.Leader {
			return true
		}
	}
	l.m.log.Debug().Str("shard", shard).Str("to", to).Msg("handoff deferred: successor not campaigning yet")
	return false
}

// callStarted runs OnStartedLeading on its own goroutine; the returned
// channel is closed when it returns.
func (l *loop) callStarted(ctx context.Context, shard string, token zxidfence.Token) <-chan struct{} {
	returned := make(chan struct{})
	l.workers.Add(1)
	go func() {
		defer l.workers.Done()
		defer close(returned)
		if f := l.m.cfg.OnStartedLeading; f != nil {
			f(ctx, shard, token)
		}
	}()
	return returned
}

// awaitCallback waits for OnStartedLeading to return, at most
// HandoffTimeout. A callback still running is logged; Run still waits for
// it before returning.
func (l *loop) awaitCallback(shard string, returned <-chan struct{}) {
	t := time.NewTimer(l.m.cfg.HandoffTimeout)
	defer t.Stop()
	select {
	case <-returned:
	case <-t.C:
		l.m.log.Warn().Str("shard", shard).Dur("handoff_timeout", l.m.cfg.HandoffTimeout).
			Msg("OnStartedLeading still running after its context was cancelled; resigning anyway")
	}
}

// resign gives the leadership up, bounded by HandoffTimeout.
func (l *loop) resign(r *runner, lead *recipe.Leadership) {
	ctx, cancel := context.WithTimeout(context.Background(), l.m.cfg.HandoffTimeout)
	defer cancel()
	if err := lead.Resign(ctx); err != nil && !errors.Is(err, recipe.ErrResigned) {
		l.m.log.Warn().Err(err).Str("shard", r.id).Msg("resign")
	}
}
