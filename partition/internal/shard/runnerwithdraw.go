package shard

// A runner's election is withdrawn when the shard is assigned elsewhere
// while the runner campaigns: its context is cancelled, and a candidate
// that had not won closes without any callback. One that won just as the
// assignment moved (after it last read the assignment, before the loop saw
// it lead) holds a leadership whose OnStartedLeading runs already; it ends
// like a handoff, with ErrWithdrawn, only once the new target's candidate
// waits in the election (awaitSuccessor waits for it, at most
// HandoffTimeout), so the shard passes straight to it. Otherwise the
// withdrawal is dropped: the leadership goes on, and the loop, which has
// seen it start by then, hands it off as any leadership assigned elsewhere
// (ErrHandoff). A shard is never resigned to a member that does not
// campaign for it.

// Withdraw asks a campaigning runner to end its election because the shard
// is assigned elsewhere, cancelling its context and waking it if it is
// parked. A later stop (any reason) takes precedence.
func (r *Runner) Withdraw() { r.interrupt(func() { r.withdrawing = true }) }

// takeWithdrawal reports whether a withdrawal was asked, and forgets it.
func (r *Runner) takeWithdrawal() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.withdrawing
	r.withdrawing = false
	return w
}

// withdrawnHeld decides a withdrawal that found the runner holding a
// leadership: true and ErrWithdrawn once the shard's target (another
// member) has a candidate waiting in the election (awaitSuccessor waits
// for it); otherwise false, the loop told (Deferred) that the leadership
// goes on.
func (r *Runner) withdrawnHeld() (ended bool, reason error) {
	to := r.m.Env.TargetOf(r.id)
	if to == "" || to == r.m.MemberID {
		r.report(Deferred, 0)
		return false, nil
	}
	switch r.awaitSuccessor(to) {
	case successorReady:
		r.Stop(ErrWithdrawn)
		if err := r.held.lead.Err(); err != nil {
			return true, err
		}
		return true, ErrWithdrawn
	case successorInterrupted:
		return r.holdEnded()
	}
	r.report(Deferred, 0)
	return false, nil
}
