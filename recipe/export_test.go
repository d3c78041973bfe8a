package recipe

import (
	"time"
	"unsafe"
)

// GuardedLeases returns how many leaderships s checks the lease of, and
// whether the timer of those checks is armed.
func GuardedLeases(s *Session) (int, bool) {
	g := &s.leases
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.due), g.timer != nil
}

// CandidateSize is the size of a Candidate in bytes.
const CandidateSize = unsafe.Sizeof(Candidate{})

// X509ID is x509ID: the x509 id ZooKeeper gives a client certificate's
// DER-encoded subject.
var X509ID = x509ID

// LeaseEnd returns when c's lease for l runs out with the margin of c's
// policy (the instant the leadership is ended at, on a process that is
// not descheduled), and false if nothing vouches for l's session.
func LeaseEnd(c *Candidate, l *Leadership) (time.Time, bool) {
	return c.sess.leaseDeadline(l.sessionID, c.leaseMargin())
}
