package partition

import "time"

// This file is the loop's first stage (step, loop.go): it feeds the core
// what the sessions changed since the last step, before the core's plan
// (member.Core.Step) and the assignment.

// notice feeds the core the session's replacement and lease
// (loopgrace.go) and the seats that cannot lead (loopliveness.go).
func (l *loop) notice() {
	l.noticeSession()
	l.noteLease()
	l.checkSeats(time.Now())
}
