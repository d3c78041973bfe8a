package recipe

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// loopState is the candidate's state, read and written only by its loop.
// Its flags sit together at the end, so that thousands of candidates pay
// no padding between them.
type loopState struct {
	sessID int64 // session the state refers to; 0 when none
	gen    uint64

	since   time.Time // entered (or re-entered) the election, for metrics
	waiters []*campaignReq

	mine     string   // child name of our znode, "" when none
	minePath string   // its full path (setMine), shared by the requests, routes and leadership that name it
	mineSt   *zk.Stat // its stat (from the create's reply or read back), kept in the current session
	pred     string   // full path of the watched predecessor, "" when none
	stuck    string   // the persistent predecessor last warned about
	lead     *Leadership
	open     *Leadership // the last one ended with its reason open (Leadership.Reason)
	retry    *time.Timer
	backoff  retry.Backoff // pauses of scheduleRetry

	leaseWait *leaseWaiter // waiting for the lease to hold again
	// dropAfter maps a znode being deleted to the predecessor whose watch
	// is removed once that delete is answered: the delete goes first (nil
	// until a withdrawal needs it).
	dropAfter map[string]string

	cleanup  map[string]bool // full paths being deleted (nil until the first)
	closeRep chan error
	exited   chan struct{} // Close's: closed when the loop has exited
	closeTmr *time.Timer
	resigns  []chan error

	step    stepKind
	phase   phase     // where the candidate stands (phase.go)
	session sessState // whether steps may be sent (phase.go)
	outcome outcome   // whether a create may have left a znode we do not know of (proof.go)
	proof   proof     // what proves our place without a listing (proof.go)
	// The facts below cross the phases (phase.go).
	creating   bool // a create is in flight (at most one)
	restartDue bool // restart once the create in flight returns
	// newElection: the next create is sent with the election's own
	// (WithNewElection); cleared by the first create.
	newElection bool
	// firstFired: an event on firstPath came while the create that routed
	// it was in flight (before our znode had a name to match): the read
	// behind that create no longer shows the znode as it is, and its
	// watch has fired.
	firstFired bool
	// mineWatched: the data watch on our znode was armed in this
	// connection (while waiting behind pred) and has not fired since.
	mineWatched bool
	swept       bool // a sweep listing completed since withdrawing
}

func (st *loopState) init(id int64, connected bool) {
	st.sessID = id
	if connected {
		st.setSession(sessUsable)
	}
	st.swept = true
}

// stepKind is the ZooKeeper step in flight, if any.
type stepKind uint8

const (
	stepNone stepKind = iota
	stepCreate
	stepList
	stepAdopt
	stepGetMine
	stepGetPred
)

// Loop-internal messages.
type (
	nodeEvent  zk.Event
	leaseFired struct{ lead *Leadership }
	leaseBack  struct{ w *leaseWaiter } // the lease holds again (lease.go)
	retryFired struct{ gen uint64 }
	closeLate  struct{}
)

// loop is the candidate's event loop: the mailbox runs it on a goroutine
// whenever mail arrives while none runs, and it returns once the mailbox
// is empty (or the candidate has exited).
func (c *Candidate) loop() {
	for {
		msgs := c.mb.take()
		if msgs == nil {
			return
		}
		for _, m := range msgs {
			c.handle(m)
		}
		if c.finished() {
			c.exit()
			close(c.st.exited)
			return
		}
	}
}

func (c *Candidate) handle(m any) {
	switch m := m.(type) {
	case zkconn.Event:
		c.onSession(m)
	case nodeEvent:
		c.onNode(zk.Event(m))
	case *campaignReq:
		c.onCampaign(m)
	case cancelCampaign:
		c.onCancel(m.req)
	case *resignReq:
		c.onResign(m)
	case closeReq:
		c.onClose(m)
	case createReply:
		c.onCreate(m)
	case listReply:
		c.onList(m)
	case adoptReply:
		c.onAdopt(m)
	case mineReply:
		c.onMine(m)
	case predReply:
		c.onPred(m)
	case deleteReply:
		c.onDeleted(m)
	case leaseFired:
		c.onLease(m.lead)
	case leaseBack:
		c.onLeaseBack(m.w)
	case retryFired:
		if m.gen == c.st.gen && c.st.step == stepNone {
			c.restart()
		}
	case closeLate:
		c.finish(fmt.Errorf("close candidate on %s: %w", c.path, ErrCleanupIncomplete))
	}
	c.settle()
}

// onSession reacts to the session's state changes.
func (c *Candidate) onSession(ev zkconn.Event) {
	st := &c.st
	c.stopAwaitingLease()
	st.proof, st.mineWatched = proofNone, false // any session change voids the proofs
	st.gen++
	st.step = stepNone
	switch ev.Kind {
	case zkconn.Connected:
		if st.sessID != 0 && st.sessID != ev.ID {
			c.sessionLost(st.sessID)
		}
		c.settleOpen(nil) // still the same session: it was only suspended
		st.sessID = ev.ID
		st.setSession(sessUsable)
		c.restart()
	case zkconn.Disconnected:
		st.setSession(sessDown)
		if st.lead != nil && !c.cfg.policy.tolerate {
			c.endLead(ErrSuspended)
		}
	case zkconn.Expired:
		if ev.ID == st.sessID || st.sessID == 0 {
			c.sessionLost(ev.ID)
		}
	case zkconn.Closed:
		st.setSession(sessClosed)
		c.endLead(ErrClosed)
		c.settleOpen(nil)
		c.failWaiters(ErrSessionClosed)
		c.leave()
		c.setMine("")
		clear(st.cleanup) // the server deletes the session's znodes
	}
}

// sessionLost handles the end of session id: its znodes are gone.
func (c *Candidate) sessionLost(id int64) {
	st := &c.st
	st.setSession(sessDown)
	st.sessID = 0
	c.endLead(ErrSessionExpired)
	c.settleOpen(ErrSessionExpired)
	c.sess.conn.Unroute(st.minePath, c.sink)
	c.setMine("")
	if st.creating { // a create queued in go-zookeeper may land in the next session
		st.outcome.lost()
	}
	if st.phase.inElection() {
		st.since = time.Now()
	}
	c.log().Warn().Int64("session_id", id).Str("reason", "session_expired").Msg("candidate's session ended; its znode is gone")
}

// onNode reacts to a watch event on our znode or our predecessor.
func (c *Candidate) onNode(ev zk.Event) {
	st := &c.st
	switch ev.Path {
	case st.pred:
		st.gen++
		if ev.Type == zk.EventNodeDataChanged {
			c.watchPred(st.pred) // re-arm; a change of data is not a departure
			return
		}
		if ev.Type == zk.EventNodeDeleted && c.promotable() {
			c.promote() // the lowest znode left: we are first, no listing needed
			return
		}
		c.list() // the proof does not hold: re-read the children
	case st.minePath:
		if st.mine == "" || st.cleanup[ev.Path] {
			return
		}
		st.proof.drop(proofFirst) // the watch fired: re-read before leading again
		st.mineWatched = false
		if ev.Type == zk.EventNodeDataChanged {
			if st.lead != nil { // re-arm the leader's watch on its znode
				st.gen++
				c.getMine()
			}
			return
		}
		st.gen++
		c.mineGone(ErrZnodeDeleted)
	case c.firstPath():
		// Our create's znode, before its reply named it ours; once the reply
		// is handled the route is gone, or the znode is being deleted.
		st.firstFired = st.creating
	}
}

// mineGone handles our znode vanishing while we did not delete it.
func (c *Candidate) mineGone(reason error) {
	st := &c.st
	if id := c.sess.ID(); st.sessID != 0 && id != st.sessID {
		// Answered in a later session: ours expired and ZooKeeper deleted
		// its znodes; the session event saying so is on its way.
		c.sessionLost(st.sessID)
		c.restart()
		return
	}
	if c.mayHaveExpired(st.sessID) {
		// ZooKeeper deletes an expired session's ephemerals and notifies
		// their watchers, this session among them, before it closes the
		// connection: the reason stays open until the session's fate is
		// known.
		if st.lead != nil {
			st.lead.endOpen(reason)
			c.endLead(reason)
		}
		c.log().Info().Str("znode", st.minePath).
			Msg("candidate znode gone while its session may have expired (no answer for a session timeout)")
	} else {
		if st.lead != nil {
			c.endLead(reason)
		}
		c.settleOpen(nil)
		c.log().Warn().Str("znode", st.minePath).Str("reason", reasonLabel(reason)).Msg("candidate znode deleted by someone else")
	}
	c.sess.conn.Unroute(st.minePath, c.sink)
	c.setMine("")
	st.step = stepNone
	if st.phase.inElection() && st.usable() {
		st.since = time.Now()
		c.create()
	}
}

// restart resumes the election after a session event or retry: re-read the
// children, since watches may have fired unseen while disconnected.
func (c *Candidate) restart() {
	st := &c.st
	if !st.usable() {
		return
	}
	if st.creating {
		st.restartDue = true
		return
	}
	switch {
	case st.mine != "" || st.outcome.unknown() || (!st.swept && st.outcome.dupRisk()):
		c.list()
	case st.phase.inElection():
		c.create()
	}
}

func (c *Candidate) finished() bool { return c.st.phase == phaseClosed }

// exit releases everything the loop holds.
func (c *Candidate) exit() {
	st := &c.st
	c.sess.conn.Unsubscribe(c.sink)
	c.stopAwaitingLease()
	c.settleOpen(nil)
	if st.needsSweep() {
		c.sweepAfterExit()
	}
	if st.lead != nil {
		c.sess.forgetLease(st.lead)
	}
	for _, t := range []*time.Timer{st.retry, st.closeTmr} {
		if t != nil {
			t.Stop()
		}
	}
	for _, m := range c.mb.close() {
		switch m := m.(type) {
		case *campaignReq:
			m.reply <- campaignResult{err: ErrClosed}
		case *resignReq:
			m.reply <- nil
		case closeReq:
			m.reply <- nil
		}
	}
	for _, r := range st.resigns {
		r <- ErrCleanupIncomplete
	}
	c.current.Store(nil)
}

// full returns the full path of child name ("" for "").
func (c *Candidate) full(name string) string {
	if name == "" {
		return ""
	}
	return c.path + "/" + name
}

// scheduleRetry re-runs restart after a backoff, for errors that are not
// connection loss (those wait for the session to come back).
func (c *Candidate) scheduleRetry() {
	st := &c.st
	st.step = stepNone
	st.backoff.Min, st.backoff.Max = 50*time.Millisecond, max(c.sess.Timeout()/3, 50*time.Millisecond)
	gen := st.gen
	if st.retry != nil {
		st.retry.Stop()
	}
	st.retry = time.AfterFunc(st.backoff.Next(), func() { c.mb.post(retryFired{gen: gen}) })
}

// setMine records our znode's name (or none), forgetting the stat of the
// previous one.
func (c *Candidate) setMine(name string) {
	path := c.full(name)
	if path == c.first && path != "" {
		path = c.first // the one string the create's route and read hold
	}
	if name != "" {
		name = path[len(c.path)+1:] // shares path's bytes, not those of the reply it came in
	}
	c.st.mine, c.st.minePath, c.st.mineSt = name, path, nil
	c.st.proof, c.st.mineWatched = proofNone, false
}

// mailbox is the unbounded, ordered inbox of one candidate's event loop.
// Posting never blocks (ZooKeeper's callbacks post into it), so thousands of
// candidates cost one slice append each per session event. The loop runs
// only while there is mail: a post to an idle mailbox starts a goroutine
// that drains it (drain, given at creation) and ends once it is empty, so
// an idle candidate (a standby waiting, a leader holding) costs no
// goroutine. At most one drains at a time, and the mutex orders each
// drain's work after the previous one's: the loop's state stays owned by
// one goroutine at a time.
type mailbox struct {
	drain func() // run on a new goroutine when mail arrives for an idle mailbox

	mu       sync.Mutex
	queue    []any
	closed   bool
	draining bool // a goroutine runs drain
}

// newMailbox returns a held mailbox: posts queue, but no drain starts
// until open (the loop's state must be initialised first).
func newMailbox(drain func()) *mailbox { return &mailbox{drain: drain, draining: true} }

// open lets the mailbox start its drain, at once if mail is queued.
func (b *mailbox) open() {
	b.mu.Lock()
	start := len(b.queue) > 0
	b.draining = start
	b.mu.Unlock()
	if start {
		go b.drain()
	}
}

// post appends m and reports false if the mailbox is closed.
func (b *mailbox) post(m any) bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	b.queue = append(b.queue, m)
	start := !b.draining
	b.draining = true
	b.mu.Unlock()
	if start {
		go b.drain()
	}
	return true
}

// take returns every queued message, oldest first; when there is none it
// marks the mailbox idle and returns nil: the draining goroutine must then
// return (the next post starts another).
func (b *mailbox) take() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	if len(q) == 0 {
		b.draining = false
	}
	return q
}

// close refuses further posts and returns what was still queued. The
// mailbox never starts a goroutine again.
func (b *mailbox) close() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	q := b.queue
	b.queue = nil
	return q
}
