package recipe

import (
	"sync"
	"time"
)

// Every leadership leads only while its local lease holds (lease.go). The
// session checks the leases of all its leaderships on one timer, armed for
// the earliest instant one of them could run out: thousands of shard
// leaderships on one session then hold no timer each, and a lease renewed
// by ZooKeeper's answers costs no message to any candidate. A leadership
// whose lease did run out is suspended at once by the timer's goroutine
// (a busy candidate loop must not stretch the lease), and its loop is told.

// leaseGuard is the session's set of leaderships and when each one's lease
// is next due to be checked.
type leaseGuard struct {
	mu     sync.Mutex
	epoch  time.Time                     // what due counts from (monotonic), set at the first guard
	due    map[*Leadership]time.Duration // the lease deadline (with its margin) when last seen holding, after epoch
	timer  *time.Timer                   // armed for next while any leadership is guarded
	next   time.Time                     // when timer fires; zero when unarmed
	seq    uint64                        // the timer's: one superseded meanwhile does nothing
	closed bool
}

// guardLease checks the lease of l from now on, first at due (its lease
// deadline with its candidate's margin, in the future), until forgetLease
// or l's lease runs out.
func (s *Session) guardLease(l *Leadership, due time.Time) {
	g := &s.leases
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	if g.due == nil {
		g.due = map[*Leadership]time.Duration{}
	}
	if g.epoch.IsZero() {
		g.epoch = time.Now()
	}
	g.due[l] = due.Sub(g.epoch)
	s.armLeasesLocked(due)
}

// forgetLease stops checking l's lease (its leadership ended).
func (s *Session) forgetLease(l *Leadership) {
	g := &s.leases
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.due, l)
	if len(g.due) == 0 && g.timer != nil {
		g.timer.Stop()
		g.timer, g.next = nil, time.Time{}
	}
}

// armLeasesLocked makes the timer fire at due at the latest (leases.mu
// held).
func (s *Session) armLeasesLocked(due time.Time) {
	g := &s.leases
	if !g.next.IsZero() && !due.Before(g.next) {
		return
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	g.seq++
	seq := g.seq
	g.next = due
	g.timer = time.AfterFunc(time.Until(due), func() { s.checkLeases(seq) })
}

// checkLeases runs when the earliest lease is due (timer seq). A leadership whose
// deadline came finds the lease renewed, by at least a poll interval (as
// leaseHolds requires), and is checked again at the new deadline; otherwise
// it is suspended and its loop told (onLease). One not yet due whose lease
// was renewed by a poll interval or more moves to the new deadline too, so
// the leaderships of a session stay due together.
func (s *Session) checkLeases(seq uint64) {
	g := &s.leases
	now, poll := time.Now(), leasePoll(s.Timeout())
	var out []*Leadership
	g.mu.Lock()
	if g.closed || seq != g.seq {
		g.mu.Unlock()
		return
	}
	g.timer, g.next = nil, time.Time{}
	var next time.Time
	for l, after := range g.due {
		due := g.epoch.Add(after)
		d, ok := s.leaseDeadline(l.sessionID, l.c.leaseMargin())
		switch {
		case !due.After(now) && (!ok || d.Sub(now) < poll):
			delete(g.due, l)
			out = append(out, l)
			continue
		case ok && d.Sub(due) >= poll:
			due = d
			g.due[l] = d.Sub(g.epoch)
		}
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	if !next.IsZero() {
		s.armLeasesLocked(next)
	}
	g.mu.Unlock()
	for _, l := range out { // every one first: a post takes its mailbox's lock and may start its loop
		l.c.suspend(l)
	}
	for _, l := range out {
		l.c.mb.post(leaseFired{lead: l})
	}
}

// closeLeases stops the timer and forgets every leadership (Session.Close).
func (s *Session) closeLeases() {
	g := &s.leases
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	if g.timer != nil {
		g.timer.Stop()
		g.timer, g.next = nil, time.Time{}
	}
	g.due = nil
}
