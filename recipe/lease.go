package recipe

import (
	"sync"
	"time"
)

// The candidate's local lease: a leader leads only while the session's
// lease (see Session.leaseDeadline) holds with the policy's margin; one that
// ran out ends the leadership (ErrSuspended) and waits for the lease to hold
// again.

// leaseHolds reports whether the local lease would be valid now.
func (c *Candidate) leaseHolds() bool {
	left, ok := c.leaseLeft()
	return ok && left >= leasePoll(c.sess.Timeout())
}

// leaseLeft returns how long our local lease still holds, and false when it
// does not (it ran out, or ZooKeeper never answered this session).
func (c *Candidate) leaseLeft() (time.Duration, bool) {
	d, ok := c.sess.leaseDeadline(c.st.sessID, c.leaseMargin())
	left := time.Until(d)
	return left, ok && left > 0
}

// leaseMargin is the policy's lease margin at the negotiated session
// timeout. Any goroutine may call it.
func (c *Candidate) leaseMargin() time.Duration {
	return c.cfg.policy.leaseMargin(c.sess.Timeout())
}

// armLease has the session check the local lease of l (leaseguard.go):
// first when it would run out, and again whenever ZooKeeper's answers have
// renewed it; l is suspended at once when it does run out.
func (c *Candidate) armLease(l *Leadership) {
	d, ok := c.sess.leaseDeadline(l.sessionID, c.leaseMargin())
	if !ok || !time.Now().Before(d) {
		c.leaseLost()
		return
	}
	c.sess.guardLease(l, d)
}

// onLease ends the leadership if its lease ran out (the session's check
// suspended it), else has it checked again.
func (c *Candidate) onLease(l *Leadership) {
	if c.st.lead != l {
		return
	}
	if !l.Leading() {
		c.leaseLost()
		return
	}
	c.armLease(l)
}

// leaseLost ends the leadership whose lease ran out. Our znode may well
// still be first: if the session is still connected (no event will come to
// restart the election), wait for the lease, to lead again once ZooKeeper
// answers in time (with the same znode and token).
func (c *Candidate) leaseLost() {
	c.endLead(ErrSuspended)
	if c.st.usable() && c.st.phase.inElection() {
		c.awaitLease()
	}
}

// suspend ends l because its lease ran out (ErrSuspended). If by now the
// session may have expired (the lease with no margin is out too: the
// process was paused or starved past the session timeout), the reason stays
// open until the candidate learns the session's fate (Leadership.Reason).
// Any goroutine may call it.
func (c *Candidate) suspend(l *Leadership) {
	if c.mayHaveExpired(l.sessionID) {
		l.endOpen(ErrSuspended)
		return
	}
	l.end(ErrSuspended)
}

// mayHaveExpired reports whether session id may have expired by now: its
// lease with no margin ran out (ZooKeeper answered no request sent within
// the last session timeout), or a later session holds the lease.
func (c *Candidate) mayHaveExpired(id int64) bool {
	if id == 0 {
		return false
	}
	d, ok := c.sess.leaseDeadline(id, 0)
	return !ok || time.Now().After(d)
}

// settleOpen makes the reason of the last leadership that ended with its
// reason open final (nil keeps ErrSuspended), and counts its loss with it:
// the candidate learned what became of its session.
func (c *Candidate) settleOpen(reason error) {
	if l := c.st.open; l != nil {
		c.st.open = nil
		l.settle(reason)
		c.sess.metrics.lostFor(c.cfg.metricsLabel, l.Err())
	}
}

// awaitLease asks the session to post leaseBack once our lease holds again
// (once per wait).
func (c *Candidate) awaitLease() {
	st := &c.st
	if st.leaseWait != nil {
		return
	}
	st.leaseWait = &leaseWaiter{
		margin:  c.leaseMargin(),
		session: st.sessID,
	}
	w := st.leaseWait
	w.wake = func() { c.mb.post(leaseBack{w: w}) }
	c.sess.awaitLease(st.leaseWait)
}

// stopAwaitingLease forgets a wait for the lease (a session event restarts
// the election anyway, or the candidate exits).
func (c *Candidate) stopAwaitingLease() {
	if w := c.st.leaseWait; w != nil {
		c.sess.cancelLease(w)
		c.st.leaseWait = nil
	}
}

// onLeaseBack resumes once the lease holds again, unless a step is already
// on its way (it reaches position and checks the lease). A candidate whose
// znode was first and watched, with no event since, leads again at once
// on the stat it holds, without a request: nothing it could learn from
// ZooKeeper has happened, and thousands of shards re-reading at the same
// instant would lengthen the very line of requests whose lag ended their
// leases. Otherwise it re-reads the children.
func (c *Candidate) onLeaseBack(w *leaseWaiter) {
	st := &c.st
	if st.leaseWait != w {
		return // a wait a session event has replaced
	}
	st.leaseWait = nil
	c.settleOpen(nil) // ZooKeeper answered this session in time again
	if st.phase != phaseCampaigning || !st.usable() || st.step != stepNone {
		return
	}
	if st.proof == proofFirst && st.mineSt != nil {
		c.becomeLeader(st.mineSt)
		return
	}
	c.restart()
}

// A leadership that ends because its local lease ran out while the
// connection stays up (an overloaded server or connection answering late)
// gets no session event to restart its election, though its znode may still
// be first. Its candidate asks the session to wake it once the lease would
// hold again. One timer per session checks the lease for every waiting
// candidate, so thousands of shard elections wait without a ZooKeeper
// request or a timer of their own, and none is left waiting forever.

// leaseWaiter is one candidate waiting for its lease: wake is called once,
// when the lease with margin holds again.
type leaseWaiter struct {
	margin  time.Duration
	session int64 // the session whose lease it waits for
	wake    func()
	since   time.Time // when it began waiting (awaitLease)
}

// leaseWait is the session's set of waiting candidates.
type leaseWait struct {
	mu      sync.Mutex
	waiting map[*leaseWaiter]struct{}
	timer   *time.Timer // armed while anyone waits
	closed  bool
	log     leaseWaitLog // what the session said about a long wait (leasewaitlog.go)
}

// leasePoll is how often the session checks the lease for waiting
// candidates: a twentieth of the session timeout, at least 5 ms.
func leasePoll(timeout time.Duration) time.Duration { return max(timeout/20, 5*time.Millisecond) }

// awaitLease calls w.wake once the lease with w.margin holds again (checked
// every leasePoll), unless cancelLease or Close comes first.
func (s *Session) awaitLease(w *leaseWaiter) {
	lw := &s.leaseWait
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return
	}
	if lw.waiting == nil {
		lw.waiting = map[*leaseWaiter]struct{}{}
	}
	w.since = time.Now()
	lw.waiting[w] = struct{}{}
	if lw.timer == nil {
		lw.timer = time.AfterFunc(leasePoll(s.Timeout()), s.checkLease)
	}
}

// cancelLease forgets w.
func (s *Session) cancelLease(w *leaseWaiter) {
	lw := &s.leaseWait
	lw.mu.Lock()
	delete(lw.waiting, w)
	var ended bool
	if len(lw.waiting) == 0 {
		_, ended = lw.log.observe(time.Now(), 0, time.Time{}, s.Timeout())
	}
	lw.mu.Unlock()
	s.logLeaseWait(false, ended, 0, 0)
}

// checkLease wakes the waiters whose lease holds now and re-arms the timer
// while others wait; it warns of a long wait (leasewaitlog.go).
func (s *Session) checkLease() {
	lw := &s.leaseWait
	var wake []func()
	now := time.Now()
	oldest := now
	lw.mu.Lock()
	for w := range lw.waiting {
		// Wake with a poll interval of lease left at least, as the candidate
		// requires to lead: a lag hovering at the threshold must not make
		// leaderships flap at every poll.
		if d, ok := s.leaseDeadline(w.session, w.margin); ok && time.Until(d) >= leasePoll(s.Timeout()) {
			wake = append(wake, w.wake)
			delete(lw.waiting, w)
		} else if w.since.Before(oldest) {
			oldest = w.since
		}
	}
	lw.timer = nil
	if len(lw.waiting) > 0 && !lw.closed {
		lw.timer = time.AfterFunc(leasePoll(s.Timeout()), s.checkLease)
	}
	waiting := len(lw.waiting)
	warn, ended := lw.log.observe(now, waiting, oldest, s.Timeout())
	lw.mu.Unlock()
	s.logLeaseWait(warn, ended, waiting, now.Sub(oldest))
	for _, f := range wake {
		f()
	}
}

// closeLeaseWait stops the timer and forgets every waiter (Session.Close).
func (s *Session) closeLeaseWait() {
	lw := &s.leaseWait
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.closed = true
	if lw.timer != nil {
		lw.timer.Stop()
		lw.timer = nil
	}
	clear(lw.waiting)
}
