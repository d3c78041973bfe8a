package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/zkconn"
)

// One election reads in five files, in this order: candidate.go (the API,
// the session's events entering the loop, the requests as the loop
// answers them), loop.go (the event loop and its state, whose phases and
// knowledge phase.go and proof.go name), steps.go (the recipe's steps:
// create, list, watch, lead), ops.go (the ZooKeeper calls
// the steps make) and leadership.go (Leadership, its token and context,
// and Run calling the user's function). Side concerns have files of their
// own: naming.go, lease.go, sweep.go, metrics.go, errors.go, options.go.

// Candidate takes part in one election on one Session. It runs one event
// loop (on a goroutine only while it has mail: see mailbox): ZooKeeper replies, watch events, session events, timers and
// the Campaign, Resign and Close requests all reach that loop in order, each
// reply tagged with the generation of the step that issued it, so a stale
// reply (from before a reconnect, a new session or a newer step) is dropped.
// ZooKeeper calls run in short-lived goroutines that only deliver results.
//
// A candidate enters the election at its first Campaign and stays in it
// (recreating its znode after session expiry or deletion) until Resign,
// Close, or a Campaign whose context ends while waiting.
type Candidate struct {
	sess   *Session
	path   string
	cfg    candidateConfig
	guid   string
	prefix string
	// first is firstPath, made once for a candidate that may create its
	// election (WithNewElection): the routes, the read and the name of a
	// znode created there share it. "" otherwise.
	first string

	mb      *mailbox
	sink    *candidateSink             // the candidate itself, as the session's entry for its events
	current atomic.Pointer[Leadership] // for accessors from any goroutine
	opsWG   sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	st loopState // owned by the loop goroutine
}

// Requests from the API to the loop.
type (
	campaignReq struct {
		ctx   context.Context
		reply chan campaignResult // buffered 1; answered exactly once
	}
	campaignResult struct {
		lead *Leadership
		err  error
	}
	cancelCampaign struct{ req *campaignReq }
	resignReq      struct {
		lead  *Leadership
		reply chan error // buffered 1
	}
	closeReq struct {
		reply    chan error    // buffered 1
		exited   chan struct{} // closed when the loop has exited (only a close ends it)
		deadline time.Time     // Close's one deadline, for the deletion and the calls in flight
	}
)

// NewCandidate prepares a candidate for the election at path (an absolute
// ZooKeeper path; parents are created as needed at the first Campaign). It
// does not touch ZooKeeper yet; nil options are ignored. Errors:
// ErrNilSession, *PathError (ErrInvalidPath), *OptionError
// (ErrInvalidOption), ErrSessionClosed. The caller must Close the
// candidate.
func NewCandidate(s *Session, path string, opts ...CandidateOption) (*Candidate, error) {
	if s == nil {
		return nil, ErrNilSession
	}
	if err := validatePath(path); err != nil {
		return nil, err
	}
	cfg := defaultCandidateConfig()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.metricsLabel == "" {
		cfg.metricsLabel = path
	}
	s.metrics.election(cfg.metricsLabel)
	if t := s.Timeout(); cfg.policy.tolerate && cfg.policy.margin >= t {
		return nil, &OptionError{Option: "TolerateSuspend",
			Reason: fmt.Sprintf("margin %v is not below the negotiated session timeout %v", cfg.policy.margin, t)}
	}
	guid := newGUID()
	c := &Candidate{
		sess: s, path: path, cfg: cfg, guid: guid,
		prefix: cfg.naming.Prefix(guid),
	}
	c.sink = (*candidateSink)(c)
	c.mb = newMailbox(c.loop)
	id, connected, closed := s.conn.Subscribe(c.sink)
	if closed {
		return nil, ErrSessionClosed
	}
	c.st.init(id, connected)
	c.st.newElection = cfg.newElection
	if cfg.newElection {
		// One string for the path, the prefix and the first znode's path.
		c.first = c.firstPath()
		c.path, c.prefix = c.first[:len(path)], c.first[len(path)+1:len(path)+1+len(c.prefix)]
	}
	c.mb.open()
	return c, nil
}

// Path returns the election path.
func (c *Candidate) Path() string { return c.path }

// ID returns the participant id stored in the candidate's znode.
func (c *Candidate) ID() string { return c.cfg.id }

// Leadership returns the current leadership, or nil when the candidate does
// not lead. Once a leadership's Done channel is closed, this no longer
// returns it.
func (c *Candidate) Leadership() *Leadership {
	if l := c.current.Load(); l != nil && l.Leading() {
		return l
	}
	return nil
}

// IsLeader reports whether the candidate leads now (advice only).
func (c *Candidate) IsLeader() bool { return c.Leadership() != nil }

// Campaign enters the election (if not in it already) and blocks until the
// candidate leads, ctx ends, or the candidate or session is closed. It
// returns the current Leadership at once if the candidate already leads.
// When ctx ends first, the candidate withdraws (its znode is deleted) unless
// another Campaign is waiting, and Campaign returns ctx's error; if
// leadership came in the same instant, Campaign returns it instead.
// Other errors: ErrClosed, ErrSessionClosed, ErrACLDenied (wrapped).
func (c *Candidate) Campaign(ctx context.Context) (*Leadership, error) {
	req := &campaignReq{ctx: ctx, reply: make(chan campaignResult, 1)}
	if !c.mb.post(req) {
		return nil, ErrClosed
	}
	select {
	case r := <-req.reply:
		return r.lead, r.err
	case <-ctx.Done():
	case <-c.sess.Ended(): // credentials refused everywhere, or closed: it cannot succeed
	}
	c.mb.post(cancelCampaign{req: req})
	if r := <-req.reply; r.lead != nil || r.err != nil && ctx.Err() == nil {
		// Answered with a leadership before the cancellation was seen (won
		// in the same instant, or already leading): it is valid; giving it
		// back here could resign a leadership the caller holds elsewhere.
		return r.lead, r.err
	}
	if err := c.sess.EndErr(); err != nil && ctx.Err() == nil {
		if errors.Is(err, ErrSessionClosed) {
			err = ErrClosed
		}
		return nil, fmt.Errorf("campaign on %s: %w", c.path, err)
	}
	return nil, fmt.Errorf("campaign on %s: %w", c.path, context.Cause(ctx))
}

// Close withdraws the candidate: leadership ends (ErrClosed), its znode is
// deleted whatever the state (waiting, leading, mid-create, reconnecting),
// and its goroutines stop. It waits at most the close timeout
// (WithCloseTimeout), independent of any caller context; if the deletion
// could not be confirmed by then it returns an error wrapping
// ErrCleanupIncomplete; the deletion is still retried in the background
// until it succeeds or the session ends (Session.Close waits for it). Close
// is idempotent and returns the same result every time.
func (c *Candidate) Close() error {
	c.closeOnce.Do(func() {
		req := closeReq{reply: make(chan error, 1), exited: make(chan struct{}), deadline: time.Now().Add(c.cfg.closeTimeout)}
		if c.mb.post(req) {
			c.closeErr = <-req.reply
			<-req.exited
		}
		c.waitOps(req.deadline)
	})
	return c.closeErr
}

// waitOps waits for in-flight ZooKeeper calls, which end when their reply
// arrives or the connection drops, until deadline at most.
func (c *Candidate) waitOps(deadline time.Time) {
	done := make(chan struct{})
	go func() { c.opsWG.Wait(); close(done) }()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.log().Warn().Msg("zookeeper calls still in flight after close")
	}
}

// candidateSink is a candidate seen as the layer's Sink, the session's
// entry for its events: both are posted to the loop. It is the candidate
// itself under another method set, so it costs no allocation.
type candidateSink Candidate

func (k *candidateSink) SessionChanged(ev zkconn.Event) { k.mb.post(ev) }
func (k *candidateSink) NodeChanged(ev zk.Event)        { k.mb.post(nodeEvent(ev)) }

// sink adapts a loop's handlers to the layer's Sink: both run on
// go-zookeeper's receive goroutine and must not block.
type sink struct {
	session func(zkconn.Event)
	node    func(zk.Event) // nil: no node events expected
}

func (k *sink) SessionChanged(ev zkconn.Event) { k.session(ev) }

func (k *sink) NodeChanged(ev zk.Event) {
	if k.node != nil {
		k.node(ev)
	}
}

// The API requests (Campaign, its cancellation, Resign, Close) as the
// event loop handles them, and the withdrawal they lead to.

// onCampaign registers a waiter, entering the election if needed.
func (c *Candidate) onCampaign(req *campaignReq) {
	st := &c.st
	switch {
	case st.phase == phaseClosing || st.phase == phaseClosed:
		req.reply <- campaignResult{err: ErrClosed}
		return
	case st.session == sessClosed:
		req.reply <- campaignResult{err: ErrSessionClosed}
		return
	case st.lead != nil && st.lead.Leading():
		req.reply <- campaignResult{lead: st.lead}
		return
	}
	st.waiters = append(st.waiters, req)
	if st.phase == phaseIdle {
		c.enter(phaseCampaigning)
		st.since = time.Now()
		if st.step == stepNone && !st.creating {
			c.restart()
		}
	}
}

// onCancel removes a waiter whose context ended; the last one withdraws.
func (c *Candidate) onCancel(req *campaignReq) {
	st := &c.st
	for i, w := range st.waiters {
		if w == req {
			st.waiters = append(st.waiters[:i], st.waiters[i+1:]...)
			req.reply <- campaignResult{err: req.ctx.Err()}
			if len(st.waiters) == 0 && st.lead == nil {
				c.withdraw()
			}
			return
		}
	}
	// Already answered (with a leadership); Campaign resigns it.
}

// onResign withdraws after a Resign of the current (or last) leadership.
func (c *Candidate) onResign(req *resignReq) {
	st := &c.st
	if st.lead != req.lead && (st.lead != nil || len(st.waiters) > 0) {
		req.reply <- nil // a stale leadership: the candidate moved on
		return
	}
	if st.lead == req.lead {
		c.endLead(ErrResigned)
	}
	c.withdraw()
	if len(st.waiters) > 0 { // a Campaign came after the resign: enter again
		c.enter(phaseCampaigning)
		st.since = time.Now()
		c.restart()
		req.reply <- nil
		return
	}
	st.resigns = append(st.resigns, req.reply)
}

// onClose ends everything and withdraws, bounded by Close's deadline.
func (c *Candidate) onClose(req closeReq) {
	st := &c.st
	st.closeRep, st.exited = req.reply, req.exited
	c.endLead(ErrClosed)
	c.failWaiters(ErrClosed)
	c.withdraw()
	c.enter(phaseClosing)
	st.closeTmr = time.AfterFunc(time.Until(req.deadline), func() { c.mb.post(closeLate{}) })
}

// withdraw leaves the election: delete our znode and sweep any other
// znode carrying our GUID. A leadership must have ended first.
func (c *Candidate) withdraw() {
	st := &c.st
	c.leave()
	st.gen++
	st.step = stepNone
	mine := ""
	if st.mine != "" {
		mine = st.minePath
		c.remove(mine) // the delete first: a successor waits on it
		c.setMine("")
	}
	if st.pred != "" {
		if mine != "" && st.cleanup[mine] {
			if st.dropAfter == nil {
				st.dropAfter = map[string]string{}
			}
			st.dropAfter[mine] = st.pred // removed behind the delete (onDeleted)
		} else {
			c.sess.conn.DropWatch(st.pred, c.sink)
		}
		st.pred = ""
	}
	st.swept = false
	c.restart()
}

// settle answers Resign and Close once the candidate has nothing left in
// ZooKeeper.
//
// A Resign is answered once the resigned znode and any duplicate are
// deleted, even if a Campaign has since put the candidate back in the
// election (its new znode is not the resigned one); Close waits until
// nothing of the candidate is left.
func (c *Candidate) settle() {
	st := &c.st
	deleted := len(st.cleanup) == 0 && (st.swept || !st.outcome.dupRisk())
	in, gone := st.phase.inElection(), st.session == sessClosed
	withdrawn := !in && st.mine == "" && !st.creating
	if gone || (deleted && (withdrawn || in)) {
		for _, r := range st.resigns {
			r <- nil
		}
		st.resigns = nil
	}
	if st.phase == phaseClosing && (gone || (deleted && withdrawn)) {
		c.finish(nil)
	}
}

// finish answers Close; the loop then exits.
func (c *Candidate) finish(err error) {
	st := &c.st
	if st.closeRep == nil {
		return
	}
	if err != nil {
		c.log().Warn().Str("reason", "close_timeout").Msg("candidate closed before its znode deletion was confirmed")
	}
	st.closeRep <- err
	st.closeRep = nil
	c.enter(phaseClosed)
}

// leave takes the candidate out of the election, if it is in it: to Idle
// (refused while it still leads: endLead comes first). A closing candidate
// stays closing.
func (c *Candidate) leave() {
	if c.st.phase.inElection() {
		c.enter(phaseIdle)
	}
}

// failWaiters answers every waiting Campaign with err.
func (c *Candidate) failWaiters(err error) {
	for _, w := range c.st.waiters {
		w.reply <- campaignResult{err: err}
	}
	c.st.waiters = nil
}
