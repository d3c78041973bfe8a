package partition

import (
	"context"
	"fmt"
	"time"
)

// ownerExpiryWait is how long Run waits for the member znode held by
// another session to go before refusing the member id: a member restarted
// right after a crash (SIGKILL, OOM) finds its previous run's znode, owned
// by a session ZooKeeper has not expired yet. ZooKeeper expires a session
// within its timeout rounded up to the next tick (at most half a session
// timeout, since the minimum session is two ticks), so one and a half of
// our session timeouts covers a previous run with the same timeout.
func ownerExpiryWait(sessionTimeout time.Duration) time.Duration {
	return sessionTimeout + sessionTimeout/2
}

// awaitOwnerGone waits, at most ownerExpiryWait, for the member znode
// another session owns to be deleted, and reports false if another session
// still owns it after the whole wait. It logs once what it waits for. It
// returns ctx's cause if ctx ends first; a failing read ends the wait
// (true: prepare's next attempt decides).
func (m *Manager) awaitOwnerGone(ctx context.Context) (bool, error) {
	wait := ownerExpiryWait(m.sess.Timeout())
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	logged := false
	for {
		ok, st, ch, err := m.sess.ExistsW(ctx, m.memberPath())
		switch {
		case err != nil && ctx.Err() != nil:
			return false, waitEnded(ctx)
		case err != nil:
			return true, nil
		case !ok || st.EphemeralOwner == m.sess.ID():
			return true, nil
		case !logged:
			logged = true
			m.log.Warn().Str("znode", m.memberPath()).Str("owner_session", fmt.Sprintf("0x%x", st.EphemeralOwner)).
				Dur("wait", wait).
				Msg("member id held by another session: waiting for it to expire (a previous run of this member that was killed?) before registering")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false, waitEnded(ctx)
		}
	}
}

// waitEnded is nil when the wait's own deadline passed, else the cause
// of the caller's ctx ending.
func waitEnded(ctx context.Context) error {
	if context.Cause(ctx) == context.DeadlineExceeded {
		return nil
	}
	return context.Cause(ctx)
}
