package partition

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file runs the election of one shard on the runner's own goroutine:
// campaign, pass the shard on if it is no longer assigned here, lead, hand
// off. A runner reads the Manager (its configuration, the assignment) and
// reports to the loop through its events channel; it never touches the
// loop's state.

// slotHold is how long an election start holds one of the MaxInFlight
// slots when its campaign does not return sooner (it is queued behind a
// sitting leader): long enough for its requests to have been answered on a
// loaded session, short enough not to stall the next starts.
const slotHold = 250 * time.Millisecond

// runner is one shard's election in this member, run by its own goroutine
// (run). Its methods are that goroutine's, except stop, stopping and
// stopReason (any goroutine) and the loop's bookkeeping in book.
type runner struct {
	id      string
	m       *Manager
	events  chan<- runnerEvent // the loop's, drained until every runner finished
	workers *sync.WaitGroup    // the loop's: callbacks are counted in it
	// ctx is the context of the runner's campaigning (openContext), nil
	// while it holds a leadership: a parked runner keeps none. Set by the
	// runner's goroutine, under mu; cancelled by stop.
	ctx context.Context

	// newElection: the shard had no znode when Run started; the candidate
	// creates it with its own (recipe.WithNewElection).
	newElection bool

	book runnerBook // the loop's, touched only by the loop goroutine

	// The runner's goroutine's, handed from one to the next (see park).
	seat  *seat
	cand  *recipe.Candidate
	retry *backoff        // between failed campaigns; nil until one fails
	held  *heldLeadership // the leadership being held; nil when none

	parking parking // parked while holding a leadership (runnerpark.go)

	mu     sync.Mutex
	cancel context.CancelFunc // ctx's; nil with it
	reason error              // why it was stopped; nil while it runs
	// withdrawing: the shard was assigned elsewhere while the runner
	// campaigned (runnerwithdraw.go); not taken yet.
	withdrawing bool
	handoffTo   string // the member a handoff asked for and holdEnded has not taken; "" when none
}

// runnerBook is what the loop records about a runner.
type runnerBook struct {
	handoff bool      // a handoff was asked: counts against the throttle
	removed bool      // stopped because the shard was removed
	stopAt  time.Time // when the handoff was asked
}

// newRunner prepares the runner of shard id.
func newRunner(l *loop, id string) *runner {
	return &runner{id: id, m: l.m, events: l.events, workers: &l.workers}
}

// openContext gives the runner a context for campaigning, unless it has
// one: cancelled at once if the runner is stopped already, else by stop.
// It is not derived from the loop's base: the loop stops every runner
// before it cancels base, so a runner costs its parent no registration.
func (r *runner) openContext() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx != nil {
		return
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if r.reason != nil || r.withdrawing {
		r.cancel()
	}
}

// closeContext drops the campaigning context once the runner leads: stop
// and a parked runner's wake-ups need none.
func (r *runner) closeContext() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cancel()
	r.ctx, r.cancel = nil, nil
}

// stop asks the runner to end for reason, cancelling its context and
// waking it if it is parked.
func (r *runner) stop(reason error) {
	r.interrupt(func() {
		if r.reason == nil {
			r.reason = reason
		}
	})
}

// interrupt records a request with set (called under mu), cancels the
// runner's campaigning context and wakes it if it is parked.
func (r *runner) interrupt(set func()) {
	r.mu.Lock()
	set()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	r.wake()
}

// askHandoff asks the runner to hand its leadership to member to, waking
// it if it is parked; false while an earlier request is not taken yet.
func (r *runner) askHandoff(to string) bool {
	r.mu.Lock()
	if r.handoffTo != "" {
		r.mu.Unlock()
		return false
	}
	r.handoffTo = to
	r.mu.Unlock()
	r.wake()
	return true
}

// takeHandoff returns the member a handoff asked for and forgets the
// request; "" when none is asked.
func (r *runner) takeHandoff() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	to := r.handoffTo
	r.handoffTo = ""
	return to
}

// handoffAsked reports whether a handoff request waits to be taken.
func (r *runner) handoffAsked() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.handoffTo != ""
}

// stopping reports whether the runner was stopped or its election
// withdrawn (and the withdrawal not dropped yet).
func (r *runner) stopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason != nil || r.withdrawing
}

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

// start places the runner's election on a session and creates its
// candidate, on the start queue's goroutine (startqueue.go), then campaigns
// (campaignLoop) on a goroutine of its own once one of its session's
// MaxInFlight election-start slots is free; until then it waits in the
// session's line without a goroutine. The runner's goroutine ends while it
// leads (see park) and another continues when the leadership needs it;
// finish reports evFinished last.
func (r *runner) start() {
	if r.stopping() {
		r.finish()
		return
	}
	r.openContext()
	r.seat = r.takeSeat()
	if r.seat == nil {
		r.finish()
		return
	}
	opts := []recipe.CandidateOption{recipe.WithParticipantID(r.m.cfg.MemberID),
		recipe.WithCloseTimeout(closeTimeout(r.seat.sess.Timeout())), recipe.WithMetricsLabel(r.m.shardsLabel()),
		recipe.WithACL(r.m.cfg.ACL), recipe.WithACLCheck(recipe.ACLCheckOff), // checked at start (checkRootACL)
		recipe.WithNaming(r.m.naming), recipe.WithBatchedCreates()}
	if r.newElection {
		opts = append(opts, recipe.WithNewElection())
	}
	cand, err := recipe.NewCandidate(r.seat.sess, r.m.shardPath(r.id), opts...)
	if err != nil {
		r.m.log.Error().Err(err).Str("shard", r.id).Msg("create candidate")
		r.finish()
		return
	}
	r.cand = cand
	if r.seat.starts.startWhenFree(r.ctx, r.campaignLoop) {
		go r.campaignLoop(true)
	}
}

// campaignLoop campaigns until the runner is stopped, leading whenever it
// wins while the shard is assigned here. Each campaign holds one of its
// session's MaxInFlight election-start slots (holding: the first one holds
// it already); while none is free the goroutine returns and the session's
// line continues the loop on a new one in its turn. Once it leads it parks
// (the goroutine returns; resume continues); otherwise it finishes.
func (r *runner) campaignLoop(holding bool) {
	r.openContext()
	for r.ctx.Err() == nil {
		if !holding && !r.seat.starts.startWhenFree(r.ctx, r.campaignLoop) {
			return
		}
		holding = false
		next := r.seat.sess.NextConnect() // a new session ends the pause after a failure
		lead, err := r.campaign(r.seat, r.cand)
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, recipe.ErrSessionClosed) || errors.Is(err, recipe.ErrClosed) {
				break
			}
			r.m.log.Warn().Err(err).Str("shard", r.id).Msg("campaign")
			if r.retry == nil {
				r.retry = newBackoff()
			}
			r.retry.waitOr(r.ctx, next)
			continue
		}
		r.retry = nil // the next failure backs off from the start
		if r.ctx.Err() != nil || !r.m.assignedToMe(r.id) {
			r.passOn(lead)
			break
		}
		if h := r.m.wonHook; h != nil {
			h(r.id)
		}
		r.startLeading(lead)
		r.closeContext()
		r.park()
		return
	}
	if holding {
		r.seat.starts.release()
	}
	r.finish()
}

// finish closes the candidate, gives its seat back and reports evFinished,
// in that order; the runner's last act.
func (r *runner) finish() {
	var unwithdrawn error // reported with evFinished: the stopping member logs one line for all
	if r.cand != nil {
		if err := r.cand.Close(); err != nil {
			if errors.Is(r.stopReason(), ErrStopping) {
				unwithdrawn = err
			} else {
				r.m.log.Warn().Err(err).Str("shard", r.id).Msg("close candidate")
			}
		}
	}
	if r.seat != nil {
		r.m.pool.leave(r.seat, r.id)
	}
	r.events <- runnerEvent{r: r, kind: evFinished, reason: unwithdrawn}
	r.workers.Done()
}

// takeSeat places the runner's election on one of the member's sessions,
// retrying with backoff while a sibling session cannot be opened (the
// first failure reported to the loop, evUnseated: see loopliveness.go); it
// returns nil once the runner is stopped or the member's sessions closed.
func (r *runner) takeSeat() *seat {
	retry := newBackoff()
	for reported := false; ; {
		seat, err := r.m.pool.place(r.ctx, r.id)
		if err == nil {
			return seat
		}
		if r.ctx.Err() != nil || errors.Is(err, recipe.ErrSessionClosed) {
			return nil
		}
		r.m.log.Warn().Err(err).Str("shard", r.id).Msg("place election on a session")
		if !reported {
			reported = true
			r.report(evUnseated, 0)
		}
		retry.wait(r.ctx)
	}
}

// campaign runs one Campaign holding one of its session's MaxInFlight
// election-start slots, given back when Campaign returns or slotHold
// passes.
func (r *runner) campaign(seat *seat, cand *recipe.Candidate) (*recipe.Leadership, error) {
	var once sync.Once
	release := func() { once.Do(seat.starts.release) }
	t := time.AfterFunc(slotHold, release)
	defer func() { t.Stop(); release() }()
	return cand.Campaign(r.ctx)
}

// passOn resigns a leadership won while the shard is assigned elsewhere,
// before any callback runs.
func (r *runner) passOn(lead *recipe.Leadership) {
	r.m.met.passedOn.Inc()
	r.resign(lead)
}

// startLeading hands the leadership to OnStartedLeading (on its own
// goroutine) and reports it; the runner then holds it until it ends or the
// runner is stopped (see resume), and stopLeading follows.
func (r *runner) startLeading(lead *recipe.Leadership) {
	token := lead.Token()
	r.m.setLeading(r.id, lead)
	r.m.met.started.Inc()
	r.report(evStarted, uint64(token))
	r.m.log.Debug().Str("shard", r.id).Stringer("token", token).Msg("leading")
	work, cancelWork := context.WithCancel(lead.Context())
	r.held = &heldLeadership{lead: lead, cancelWork: cancelWork}
	r.callStarted(work, r.id, token, &r.held.callback)
}

// stopLeading ends the held leadership for reason: it cancels the
// callback's context, waits for the callback to return (at most
// HandoffTimeout), calls OnStoppedLeading, and only then resigns: demote
// before promote.
func (r *runner) stopLeading(reason error) {
	h := r.held
	r.held = nil
	lead, token := h.lead, h.lead.Token()
	h.cancelWork()
	r.m.clearLeading(r.id)
	r.awaitCallback(r.id, &h.callback)
	reason = r.finalReason(lead, reason)
	if f := r.m.cfg.OnStoppedLeading; f != nil {
		f(r.id, reason)
	}
	r.m.met.stopped.WithLabelValues(reasonLabel(reason)).Inc()
	if errors.Is(reason, recipe.ErrSuspended) && !r.stopping() {
		r.report(evSuspended, 0) // the record keeps the shard: see holdSuspended
	} else {
		r.reportStopped(reason)
	}
	r.m.log.Debug().Str("shard", r.id).Stringer("token", token).AnErr("reason", reason).Msg("stopped leading")
	if lead.Err() == nil {
		r.resign(lead)
	}
}

// holdEnded reports, without blocking, whether the held leadership ends
// now and why: it ended, the runner was stopped, or a handoff found its
// successor waiting in the election. A handoff whose successor is not
// queued (yet) is deferred: the leadership goes on and the loop asks
// again later, so a shard is never resigned to a member that does not
// campaign for it.
func (r *runner) holdEnded() (error, bool) {
	lead := r.held.lead
	if err := lead.Err(); err != nil {
		return err, true // lost (expiry, deletion, suspension) wins over our own stop
	}
	if reason := r.stopReason(); reason != nil {
		return reason, true
	}
	if r.takeWithdrawal() {
		return r.withdrawnHeld()
	}
	if to := r.takeHandoff(); to != "" {
		if r.m.targetOf(r.id) == to && r.successorQueued(r.id, to) {
			r.stop(ErrHandoff)
			if err := lead.Err(); err != nil {
				return err, true
			}
			return ErrHandoff, true
		}
		r.report(evDeferred, 0)
	}
	return nil, false
}

// finalReason returns the final reason of a leadership that was lost: one
// lost after its session could already have expired waits (at most
// HandoffTimeout) to learn whether it did (recipe's Leadership.Reason).
// Our own reasons (a handoff, a stop) are returned as they are.
func (r *runner) finalReason(lead *recipe.Leadership, reason error) error {
	if lead.Err() == nil || errors.Is(reason, ErrHandoff) || errors.Is(reason, ErrWithdrawn) ||
		errors.Is(reason, ErrShardRemoved) || errors.Is(reason, ErrStopping) {
		return reason
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.m.cfg.HandoffTimeout)
	defer cancel()
	return lead.Reason(ctx)
}

// successorQueued reports whether member to has a candidate in the
// election of shard.
func (r *runner) successorQueued(shard, to string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), r.m.cfg.HandoffTimeout)
	defer cancel()
	ps, err := recipe.Participants(ctx, r.m.sess, r.m.shardPath(shard))
	if err != nil {
		r.m.log.Warn().Err(err).Str("shard", shard).Msg("read election before handoff")
		return false
	}
	for _, p := range ps {
		if p.ID == to && !p.Leader {
			return true
		}
	}
	r.m.log.Debug().Str("shard", shard).Str("to", to).Msg("handoff deferred: successor not campaigning yet")
	return false
}

// callStarted runs OnStartedLeading on its own goroutine, telling cb when
// it returns.
func (r *runner) callStarted(ctx context.Context, shard string, token zxidfence.Token, cb *callback) {
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		defer cb.finish()
		if f := r.m.cfg.OnStartedLeading; f != nil {
			f(ctx, shard, token)
		}
	}()
}

// awaitCallback waits for OnStartedLeading to return, at most
// HandoffTimeout. A callback still running is logged; Run still waits for
// it before returning.
func (r *runner) awaitCallback(shard string, cb *callback) {
	returned := cb.wait()
	if returned == nil {
		return
	}
	t := time.NewTimer(r.m.cfg.HandoffTimeout)
	defer t.Stop()
	select {
	case <-returned:
	case <-t.C:
		r.m.log.Warn().Str("shard", shard).Dur("handoff_timeout", r.m.cfg.HandoffTimeout).
			Msg("OnStartedLeading still running after its context was cancelled; resigning anyway")
	}
}

// resign gives the leadership up, bounded by HandoffTimeout.
func (r *runner) resign(lead *recipe.Leadership) {
	ctx, cancel := context.WithTimeout(context.Background(), r.m.cfg.HandoffTimeout)
	defer cancel()
	err := lead.Resign(ctx)
	switch {
	case err == nil || errors.Is(err, recipe.ErrResigned):
	case errors.Is(r.stopReason(), ErrStopping):
		// The candidate's Close tries the delete again; a stopping member
		// logs one line for every shard it could not withdraw (unwithdrawn.go).
	default:
		r.m.log.Warn().Err(err).Str("shard", r.id).Msg("resign")
	}
}

// report sends a runner event to the loop, which drains events until every
// runner has finished.
func (r *runner) report(kind eventKind, token uint64) {
	r.events <- runnerEvent{r: r, kind: kind, token: token}
}

// reportStopped reports the end of a leadership and its reason.
func (r *runner) reportStopped(reason error) {
	r.events <- runnerEvent{r: r, kind: evStopped, reason: reason}
}
