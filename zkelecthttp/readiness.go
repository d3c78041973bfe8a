package zkelecthttp

import (
	"context"
	"sync/atomic"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// readiness decides a member's /readyz: the member is ready while it is
// registered under <root>/members by this session, not draining (stopping),
// and once it leads exactly the shards its latest assignment gives it (its
// share by weight; none when an operator drained it), that is, once the
// first balance is done. Live members are counted as the Manager counts
// them (partition.LiveMembers: persistent znodes under members are not
// members). The balance is latched: later rebalances do not make a running
// member unready; registration and draining are checked every time.
type readiness struct {
	sess   *recipe.Session
	mgr    *partition.Manager
	root   string
	member string
	report func(ready bool) // optional: every verdict

	balanced atomic.Bool // the first balance was reached
	draining atomic.Bool
}

// drain makes the member unready for good: it is stopping.
func (r *readiness) drain() {
	r.draining.Store(true)
	r.tell(false)
}

// ready reads the member znodes; ctx bounds the reads.
func (r *readiness) ready(ctx context.Context) bool {
	ok := r.check(ctx)
	if ok {
		r.balanced.Store(true)
	}
	r.tell(ok)
	return ok
}

func (r *readiness) tell(ok bool) {
	if r.report != nil {
		r.report(ok)
	}
}

func (r *readiness) check(ctx context.Context) bool {
	if r.draining.Load() {
		return false
	}
	members, err := partition.LiveMembers(ctx, r.sess, r.root)
	if err != nil || members[r.member] != r.sess.ID() {
		return false
	}
	if r.balanced.Load() {
		return true
	}
	share, computed := r.mgr.Assigned()
	return computed && len(r.mgr.Leaderships()) == share
}
