package recipe

import "time"

// This file tells when elections wait long for their session's lease. A
// candidate first in its election may not lead while the lease is out
// (ZooKeeper's answers lag too far behind: an overloaded server or link, or
// this process starved of CPU); it waits, logging at debug level only. A
// member's shards could then stay unled for minutes with nothing logged
// (issue 32's cold starts on a loaded machine). So the session logs one
// warning once an election has waited a session timeout (at most one every
// leaseWarnEvery), and one line once no election waits any more.

// leaseWarnEvery spaces the session's warnings of long waits for the
// lease: a lag hovering about the lease makes waits start and end every
// few seconds.
const leaseWarnEvery = time.Minute

// leaseWaitLog is what the session said about waits for the lease (under
// leaseWait.mu).
type leaseWaitLog struct {
	warned time.Time // when the last warning was logged; zero before any
	open   bool      // a wait was warned about and has not ended
}

// observe looks at the waiting elections at now (waiting of them, the
// longest waiting since oldest) and reports whether to warn, or to say
// that a wait warned about has ended (no election waits any more).
func (g *leaseWaitLog) observe(now time.Time, waiting int, oldest time.Time, timeout time.Duration) (warn, ended bool) {
	if waiting == 0 {
		ended, g.open = g.open, false
		return false, ended
	}
	if now.Sub(oldest) >= timeout && (g.warned.IsZero() || now.Sub(g.warned) >= leaseWarnEvery) {
		g.warned, g.open = now, true
		return true, false
	}
	return false, false
}

// logLeaseWait logs what observe decided, outside leaseWait.mu.
func (s *Session) logLeaseWait(warn, ended bool, waiting int, waited time.Duration) {
	switch {
	case warn:
		s.log.Warn().Int64("session_id", s.ID()).Int("elections", waiting).Dur("waited", waited).
			Dur("answer_lag", s.AnswerLag()).Dur("session_timeout", s.Timeout()).
			Msg("elections first in line cannot lead: ZooKeeper's answers lag beyond the session's lease (server or link overloaded, or this process starved of CPU); they lead once answers are prompt again")
	case ended:
		s.log.Info().Int64("session_id", s.ID()).Dur("answer_lag", s.AnswerLag()).
			Msg("no election waits for the session's lease any more")
	}
}
