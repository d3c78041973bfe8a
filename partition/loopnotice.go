package partition

import "time"

// This file is the loop's first stage (step, loop.go): it notices what
// time and the session changed since the last step, before the
// assignment is decided.

// notice brings the loop's state up to now: the session's replacement and
// lease (loopgrace.go), expired reservations, seats that cannot lead
// (loopliveness.go), and an operator freeze that ran out (loopoperator.go).
func (l *loop) notice() {
	l.noticeSession()
	l.noteLease()
	l.expireReservation(time.Now())
	l.checkSeats(time.Now())
	l.expireUnseated(time.Now())
	if l.freeze.Expired(time.Now()) {
		l.steps.Dirty = true
	}
}
