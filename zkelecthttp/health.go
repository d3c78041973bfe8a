package zkelecthttp

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/zkelect/zkelect/recipe"
)

// Check is one rule of /healthz: nil when it holds, else why the process
// is unhealthy (the 503's body). A probe calls it, so it must not block.
// The daemon's "a shard's child outlives its grace" is one.
type Check func() error

// ErrSessionExpired is SessionHealth's error when the session expired and
// no new one replaced it yet.
var ErrSessionExpired = errors.New("session expired and not replaced yet")

// LeaseError is SessionHealth's error when the session's lease ran out.
type LeaseError struct {
	SessionTimeout time.Duration // the negotiated session timeout
}

// Error names the cause and the session timeout.
func (e *LeaseError) Error() string {
	return fmt.Sprintf("lease ran out: ZooKeeper's quorum leader vouched for the session within no session timeout (%v): disconnected, or its server cut off from the quorum", e.SessionTimeout)
}

// SessionHealth is the session's rule of /healthz, as client-go's
// HealthzAdaptor fails a leader that stopped renewing: a restart would help
// when the session's lease ran out (nothing proved for a whole session
// timeout that ZooKeeper's quorum leader still hears of it: disconnected,
// a server that stopped answering, or one cut off from the quorum; see
// recipe.Session.LeaseRemaining), returning a *LeaseError, or when the
// session expired and no new one replaced it yet, returning
// ErrSessionExpired. A short disconnection within the lease is healthy:
// the session survives it.
func SessionHealth(sess *recipe.Session) Check {
	return func() error {
		switch {
		case sess.ID() == 0:
			return ErrSessionExpired
		case sess.LeaseRemaining() == 0:
			return &LeaseError{SessionTimeout: sess.Timeout()}
		}
		return nil
	}
}

// Health is /healthz's verdict: the first of its checks that fails, in
// order, or nil.
type Health []Check

// Healthy returns nil, or why the process is not healthy.
func (h Health) Healthy() error {
	for _, c := range h {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// ServeHTTP answers 200 "ok", or 503 "unhealthy: <reason>".
func (h Health) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if err := h.Healthy(); err != nil {
		http.Error(w, "unhealthy: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}
