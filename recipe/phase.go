package recipe

// A candidate's state is two small enums, each changed in one place that
// refuses what cannot happen, and a few facts that cross their values:
//
//	phase:   Idle ⇄ Campaigning ⇄ Leading     (Campaign, Resign, a lost or won election)
//	         Idle → Closing → Closed            (Close: leave the election first, then withdraw)
//	session: Down ⇄ Usable, either → Closed     (connection and session events)
//
// Only Campaigning and Leading are in the election (their candidate has or
// is getting a znode); Leading holds exactly when loopState.lead is set. A
// closed session ends the election for good: the candidate stays Idle (or
// Closing) and Campaign fails with ErrSessionClosed.
//
// What crosses the phases is the znode bookkeeping: the step in flight
// (stepKind), what the candidate knows of its creates' results and of its
// place (outcome and proof, proof.go), and a few facts of loop.go: a create
// in flight and a restart waiting for it (creating, restartDue), a sweep
// listing done since withdrawing (swept), the watch on our znode armed
// (mineWatched), and for WithNewElection the create still to send with the
// election's znode and an event on it before its reply (newElection,
// firstFired).

// phase is where a candidate stands in its election. It changes only
// through Candidate.enter, which refuses a transition phase.canEnter does
// not allow.
type phase uint8

const (
	// phaseIdle: not in the election. Before the first Campaign, and after
	// a withdrawal (Resign, the last waiting Campaign cancelled, an error
	// that is not transient, the session closed); deletions of what the
	// candidate left may still be in flight (cleanup).
	phaseIdle phase = iota
	// phaseCampaigning: in the election and not leading: creating or
	// adopting its znode, listing, waiting behind its predecessor, or
	// waiting for the lease to hold before leading.
	phaseCampaigning
	// phaseLeading: in the election and leading: loopState.lead is the
	// leadership, ended (back to Campaigning) before anything else changes.
	phaseLeading
	// phaseClosing: Close was called; the candidate has left the election
	// and waits for its znodes' deletion, at most until Close's deadline.
	// Campaign fails with ErrClosed from here on.
	phaseClosing
	// phaseClosed: Close has been answered; the loop exits once it has
	// handled the mail at hand.
	phaseClosed
)

// String returns the phase's name as logs show it.
func (p phase) String() string {
	switch p {
	case phaseIdle:
		return "idle"
	case phaseCampaigning:
		return "campaigning"
	case phaseLeading:
		return "leading"
	case phaseClosing:
		return "closing"
	case phaseClosed:
		return "closed"
	}
	return "phase(?)"
}

// inElection reports whether the candidate takes part in the election in
// phase p (it has, or is getting, a znode it keeps).
func (p phase) inElection() bool { return p == phaseCampaigning || p == phaseLeading }

// canEnter reports whether a candidate in phase p may move to next:
// staying is always allowed, a leadership ends before its candidate leaves
// the election, and Close is entered from outside the election only and
// never left.
func (p phase) canEnter(next phase) bool {
	if next == p {
		return true
	}
	switch p {
	case phaseIdle:
		return next == phaseCampaigning || next == phaseClosing
	case phaseCampaigning:
		return next == phaseIdle || next == phaseLeading
	case phaseLeading:
		return next == phaseCampaigning
	case phaseClosing:
		return next == phaseClosed
	}
	return false
}

// enter moves the candidate to phase p and reports whether it did. A
// transition canEnter refuses is a bug in the loop: it is logged and the
// phase kept.
func (c *Candidate) enter(p phase) bool {
	st := &c.st
	if !st.phase.canEnter(p) {
		c.log().Error().Stringer("from", st.phase).Stringer("to", p).Msg("candidate refused a phase transition that cannot happen; phase kept")
		return false
	}
	st.phase = p
	return true
}

// sessState is what a candidate knows of its session: whether requests can
// be sent on it now. It changes only through loopState.setSession.
type sessState uint8

const (
	// sessDown: no usable connection: not connected yet, disconnected, or
	// the session ended and no new one is established.
	sessDown sessState = iota
	// sessUsable: connected with a live session; steps may be sent.
	sessUsable
	// sessClosed: the Session was closed; nothing more happens in
	// ZooKeeper for this candidate (the server deletes the session's
	// znodes).
	sessClosed
)

// String returns the session state's name.
func (s sessState) String() string {
	switch s {
	case sessDown:
		return "down"
	case sessUsable:
		return "usable"
	case sessClosed:
		return "closed"
	}
	return "session(?)"
}

// setSession records the session's state s and reports whether it did: a
// closed session stays closed (an event that comes after Close's is
// ignored), every other change is allowed.
func (st *loopState) setSession(s sessState) bool {
	if st.session == sessClosed && s != sessClosed {
		return false
	}
	st.session = s
	return true
}

// usable reports whether steps may be sent on the session now.
func (st *loopState) usable() bool { return st.session == sessUsable }
