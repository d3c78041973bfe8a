package shard

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkelect/zkelect/internal/retry"
	root "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file runs the election of one shard on the runner's own goroutine:
// campaign, pass the shard on if it is no longer assigned here, lead, hand
// off. A runner reads its Member (the configuration, the assignment through
// Env) and reports Events on the member's channel.

// slotHold is how long an election start holds one of the MaxInFlight
// slots at most: a campaign gives its slot back when it returns, or as
// soon as it waits behind a sitting leader (recipe.WithOnWaiting: every
// request of it answered), whichever comes first. The bound covers a
// campaign that does neither (its requests retried, its lease awaited).
// A joiner's thousands of standby campaigns each waited all of it before,
// starting at most MaxInFlight per 250 ms on a session.
const slotHold = 250 * time.Millisecond

// Runner is one shard's election in this member, run by its own goroutine
// (start, then campaignLoop and resume). Its methods are that goroutine's,
// except ID, Stop, Withdraw, AskHandoff, Stopping and StopReason (any
// goroutine).
type Runner struct {
	id string
	m  *Member // shared by the member's runners
	// ctx is the context of the runner's campaigning (openContext), nil
	// while it holds a leadership (but for a handoff's wait for its
	// successor, holdContext): a parked runner keeps none. Set by the
	// runner's goroutine, under mu; cancelled by stop.
	ctx context.Context

	// newElection: the shard had no znode when Run started; the candidate
	// creates it with its own (recipe.WithNewElection).
	newElection bool

	// The runner's goroutine's, handed from one to the next (see park).
	seat  *Seat
	cand  *recipe.Candidate
	retry *retry.Backoff  // between failed campaigns; nil until one fails
	held  *heldLeadership // the leadership being held; nil when none
	// inTransition: the runner holds one of its member's Transitions
	// slots (a handoff under way), given back once it has resigned.
	inTransition bool

	// slot gives back the start slot of the campaign running (campaign
	// sets it; nil between campaigns); waiting, the candidate's
	// WithOnWaiting hook, calls it.
	slot atomic.Pointer[func()]

	parking parking // parked while holding a leadership (runnerpark.go)

	mu     sync.Mutex
	cancel context.CancelFunc // ctx's; nil with it
	reason error              // why it was stopped; nil while it runs
	// withdrawing: the shard was assigned elsewhere while the runner
	// campaigned (runnerwithdraw.go); not taken yet.
	withdrawing bool
	handoffTo   string // the member a handoff asked for and holdEnded has not taken; "" when none
}

// NewRunner prepares the runner of shard id, one of member m's; push it
// on a StartQueue to start it, after adding one to m.Workers (its finish
// is Done). newElection: the shard had no znode when Run started.
func NewRunner(m *Member, id string, newElection bool) *Runner {
	return &Runner{id: id, m: m, newElection: newElection}
}

// ID returns the runner's shard id.
func (r *Runner) ID() string { return r.id }

// openContext gives the runner a context for campaigning, unless it has
// one: cancelled at once if the runner is stopped already, else by stop.
// It is not derived from the loop's base: the loop stops every runner
// before it cancels base, so a runner costs its parent no registration.
func (r *Runner) openContext() {
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
func (r *Runner) closeContext() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cancel()
	r.ctx, r.cancel = nil, nil
}

// Stop asks the runner to end for reason, cancelling its context and
// waking it if it is parked.
func (r *Runner) Stop(reason error) {
	r.interrupt(func() {
		if r.reason == nil {
			r.reason = reason
		}
	})
}

// interrupt records a request with set (called under mu), cancels the
// runner's campaigning context and wakes it if it is parked.
func (r *Runner) interrupt(set func()) {
	r.mu.Lock()
	set()
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	r.wake()
}

// AskHandoff asks the runner to hand its leadership to member to, waking
// it if it is parked; false while an earlier request is not taken yet.
func (r *Runner) AskHandoff(to string) bool {
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
func (r *Runner) takeHandoff() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	to := r.handoffTo
	r.handoffTo = ""
	return to
}

// handoffAsked reports whether a handoff request waits to be taken.
func (r *Runner) handoffAsked() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.handoffTo != ""
}

// Stopping reports whether the runner was stopped or its election
// withdrawn (and the withdrawal not dropped yet).
func (r *Runner) Stopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason != nil || r.withdrawing
}

// StopReason returns the reason the runner was stopped with (Stop), nil
// while it was not.
func (r *Runner) StopReason() error {
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
// finish reports Finished last.
func (r *Runner) start() {
	if r.Stopping() {
		r.finish()
		return
	}
	r.openContext()
	r.seat = r.takeSeat()
	if r.seat == nil {
		r.finish()
		return
	}
	opts := []recipe.CandidateOption{recipe.WithParticipantID(r.m.MemberID),
		recipe.WithCloseTimeout(closeTimeout(r.seat.Sess.Timeout())), recipe.WithMetricsLabel(r.m.MetricsLabel),
		recipe.WithACL(r.m.ACL), recipe.WithACLCheck(recipe.ACLCheckOff), // checked at start (checkRootACL)
		recipe.WithNaming(r.m.Naming), recipe.WithBatchedCreates(), recipe.WithOnWaiting(r.waiting)}
	if r.newElection {
		opts = append(opts, recipe.WithNewElection())
	}
	cand, err := recipe.NewCandidate(r.seat.Sess, r.m.Env.ElectionPath(r.id), opts...)
	if err != nil {
		r.m.Log.Error().Err(err).Str("shard", r.id).Msg("create candidate")
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
func (r *Runner) campaignLoop(holding bool) {
	r.openContext()
	for r.ctx.Err() == nil {
		if !holding && !r.seat.starts.startWhenFree(r.ctx, r.campaignLoop) {
			return
		}
		holding = false
		next := r.seat.Sess.NextConnect() // a new session ends the pause after a failure
		lead, err := r.campaign(r.seat, r.cand)
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, recipe.ErrSessionClosed) || errors.Is(err, recipe.ErrClosed) {
				break
			}
			r.m.Log.Warn().Err(err).Str("shard", r.id).Msg("campaign")
			if r.retry == nil {
				r.retry = root.NewBackoff()
			}
			r.retry.WaitOr(r.ctx, next)
			continue
		}
		r.retry = nil // the next failure backs off from the start
		if r.ctx.Err() != nil || r.m.Env.TargetOf(r.id) != r.m.MemberID {
			r.passOn(lead)
			break
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

// finish closes the candidate, gives its seat back and reports Finished,
// in that order; the runner's last act.
func (r *Runner) finish() {
	var unwithdrawn error // reported with Finished: the stopping member logs one line for all
	if r.cand != nil {
		if err := r.cand.Close(); err != nil {
			if errors.Is(r.StopReason(), ErrStopping) {
				unwithdrawn = err
			} else {
				r.m.Log.Warn().Err(err).Str("shard", r.id).Msg("close candidate")
			}
		}
	}
	if r.seat != nil {
		r.m.Sessions.leave(r.seat, r.id)
	}
	r.m.Events <- Event{Runner: r, Kind: Finished, Reason: unwithdrawn}
	r.m.Workers.Done()
}

// takeSeat places the runner's election on one of the member's sessions,
// retrying with backoff while a sibling session cannot be opened (the
// first failure reported to the loop, Unseated: see partition's loopnotice.go); it
// returns nil once the runner is stopped or the member's sessions closed.
func (r *Runner) takeSeat() *Seat {
	retry := root.NewBackoff()
	for reported := false; ; {
		seat, err := r.m.Sessions.place(r.ctx, r.id)
		if err == nil {
			return seat
		}
		if r.ctx.Err() != nil || errors.Is(err, recipe.ErrSessionClosed) {
			return nil
		}
		r.m.Log.Warn().Err(err).Str("shard", r.id).Msg("place election on a session")
		if !reported {
			reported = true
			r.report(Unseated, 0)
		}
		retry.Wait(r.ctx)
	}
}

// campaign runs one Campaign holding one of its session's MaxInFlight
// election-start slots, given back when Campaign returns, when the
// candidate waits behind a leader (waiting), or when slotHold passes.
func (r *Runner) campaign(seat *Seat, cand *recipe.Candidate) (*recipe.Leadership, error) {
	var once sync.Once
	release := func() { once.Do(seat.starts.release) }
	t := time.AfterFunc(slotHold, release)
	r.slot.Store(&release)
	defer func() { r.slot.Store(nil); t.Stop(); release() }()
	return cand.Campaign(r.ctx)
}

// waiting is the candidate's WithOnWaiting hook, on the candidate's
// goroutine: the campaign waits behind a sitting leader with every request
// answered, so its start slot goes back now and the next start goes on.
func (r *Runner) waiting() {
	if release := r.slot.Load(); release != nil {
		(*release)()
	}
}

// passOn resigns a leadership won while the shard is assigned elsewhere,
// before any callback runs.
func (r *Runner) passOn(lead *recipe.Leadership) {
	r.m.PassedOn.Inc()
	r.resign(lead)
}

// startLeading hands the leadership to OnStartedLeading (on its own
// goroutine) and reports it; the runner then holds it until it ends or the
// runner is stopped (see resume), and stopLeading follows.
func (r *Runner) startLeading(lead *recipe.Leadership) {
	token := lead.Token()
	r.m.Held.set(r.id, lead)
	r.m.Started.Inc()
	r.report(Started, uint64(token))
	r.m.Log.Debug().Str("shard", r.id).Stringer("token", token).Msg("leading")
	work, cancelWork := context.WithCancel(lead.Context())
	r.held = &heldLeadership{lead: lead, cancelWork: cancelWork}
	r.callStarted(work, r.id, token, &r.held.callback)
}

// stopLeading ends the held leadership for reason: it cancels the
// callback's context, waits for the callback to return (at most
// HandoffTimeout), calls OnStoppedLeading, and only then resigns: demote
// before promote.
func (r *Runner) stopLeading(reason error) {
	h := r.held
	r.held = nil
	lead, token := h.lead, h.lead.Token()
	h.cancelWork()
	r.m.Held.clear(r.id)
	r.awaitCallback(r.id, &h.callback)
	reason = r.finalReason(lead, reason)
	if f := r.m.OnStoppedLeading; f != nil {
		f(r.id, reason)
	}
	r.m.Env.CountStop(reason)
	if errors.Is(reason, recipe.ErrSuspended) && !r.Stopping() {
		r.report(Suspended, 0) // the record keeps the shard: see holdSuspended
	} else {
		r.reportStopped(reason)
	}
	r.m.Log.Debug().Str("shard", r.id).Stringer("token", token).AnErr("reason", reason).Msg("stopped leading")
	if lead.Err() == nil {
		r.resign(lead)
	}
}

// holdEnded reports whether the held leadership ends now (ended) and why
// (reason, given to OnStoppedLeading): it
// ended, the runner was stopped, or a handoff found its successor waiting
// in the election (awaitSuccessor, successor.go, waits for it at most
// HandoffTimeout) and then a transition slot free (enterTransition). A
// handoff whose successor did not come, or whose shard was dealt to
// another member meanwhile, is deferred: the leadership goes on and the
// loop asks again later, so a shard is never resigned to a member that
// does not campaign for it.
func (r *Runner) holdEnded() (ended bool, reason error) {
	lead := r.held.lead
	if err := lead.Err(); err != nil {
		return true, err // lost (expiry, deletion, suspension) wins over our own stop
	}
	if stop := r.StopReason(); stop != nil {
		return true, stop
	}
	if r.takeWithdrawal() {
		return r.withdrawnHeld()
	}
	if to := r.takeHandoff(); to != "" && r.m.Env.TargetOf(r.id) == to {
		switch r.awaitSuccessor(to) {
		case successorReady:
			if !r.enterTransition(to) {
				if r.held.lead.Err() != nil || r.Stopping() {
					return r.holdEnded()
				}
				r.report(Deferred, 0) // dealt elsewhere meanwhile
				return false, nil
			}
			r.Stop(ErrHandoff)
			if err := lead.Err(); err != nil {
				return true, err
			}
			return true, ErrHandoff
		case successorInterrupted:
			return r.holdEnded() // the loop still counts the handoff: Finished ends it
		}
		r.report(Deferred, 0)
	} else if to != "" {
		r.report(Deferred, 0)
	}
	return false, nil
}

// enterTransition takes one of the member's transition slots for a
// handoff to member to (transitions.go), waiting while the leadership
// holds, the runner is neither stopped nor withdrawn and the shard is
// still assigned to to: true once taken (given back by leaveTransition).
func (r *Runner) enterTransition(to string) bool {
	ctx, done := r.holdContext(0)
	defer done()
	due := func() bool { return r.m.Env.TargetOf(r.id) == to }
	if !r.m.Transitions.enter(ctx, due) {
		return false
	}
	if !due() {
		r.m.Transitions.leave()
		return false
	}
	r.inTransition = true
	return true
}

// leaveTransition gives back the transition slot the runner holds, if any.
func (r *Runner) leaveTransition() {
	if r.inTransition {
		r.inTransition = false
		r.m.Transitions.leave()
	}
}

// finalReason returns the final reason of a leadership that was lost: one
// lost after its session could already have expired waits (at most
// HandoffTimeout) to learn whether it did (recipe's Leadership.Reason).
// Our own reasons (a handoff, a stop) are returned as they are.
func (r *Runner) finalReason(lead *recipe.Leadership, reason error) error {
	if lead.Err() == nil || errors.Is(reason, ErrHandoff) || errors.Is(reason, ErrWithdrawn) ||
		errors.Is(reason, ErrShardRemoved) || errors.Is(reason, ErrStopping) {
		return reason
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.m.HandoffTimeout)
	defer cancel()
	return lead.Reason(ctx)
}

// callStarted runs OnStartedLeading on its own goroutine, telling cb when
// it returns.
func (r *Runner) callStarted(ctx context.Context, shard string, token zxidfence.Token, cb *callback) {
	r.m.Workers.Add(1)
	go func() {
		defer r.m.Workers.Done()
		defer cb.finish()
		if f := r.m.OnStartedLeading; f != nil {
			f(ctx, shard, token)
		}
	}()
}

// awaitCallback waits for OnStartedLeading to return, at most
// HandoffTimeout. A callback still running is logged; Run still waits for
// it before returning.
func (r *Runner) awaitCallback(shard string, cb *callback) {
	returned := cb.wait()
	if returned == nil {
		return
	}
	t := time.NewTimer(r.m.HandoffTimeout)
	defer t.Stop()
	select {
	case <-returned:
	case <-t.C:
		r.m.Log.Warn().Str("shard", shard).Dur("handoff_timeout", r.m.HandoffTimeout).
			Msg("OnStartedLeading still running after its context was cancelled; resigning anyway")
	}
}

// resign gives the leadership up, bounded by HandoffTimeout.
func (r *Runner) resign(lead *recipe.Leadership) {
	ctx, cancel := context.WithTimeout(context.Background(), r.m.HandoffTimeout)
	defer cancel()
	err := lead.Resign(ctx)
	switch {
	case err == nil || errors.Is(err, recipe.ErrResigned):
	case errors.Is(r.StopReason(), ErrStopping):
		// The candidate's Close tries the delete again; a stopping member
		// logs one line for every shard it could not withdraw (partition's loopstate.go: unwithdrawn).
	default:
		r.m.Log.Warn().Err(err).Str("shard", r.id).Msg("resign")
	}
}

// report sends a runner event on the member's channel (Member.Events,
// read until every runner has finished).
func (r *Runner) report(kind EventKind, token uint64) {
	r.m.Events <- Event{Runner: r, Kind: kind, Token: token}
}

// reportStopped reports the end of a leadership and its reason.
func (r *Runner) reportStopped(reason error) {
	r.m.Events <- Event{Runner: r, Kind: Stopped, Reason: reason}
}
