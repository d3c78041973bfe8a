package zkelecthttp

import (
	"context"
	"errors"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// ReadinessInterval is how often Shards.Run re-evaluates readiness on its
// own, between /readyz requests, so that ShardsOptions.OnReadiness (the
// daemon's zkelect_daemon_ready) follows the member's state whether or not
// anything probes it. Each evaluation is one read of the member's own
// znode.
const ReadinessInterval = time.Second

// readiness decides a member's /readyz: the member is ready while its
// znode <root>/members/<member> is an ephemeral of this session, it is not
// draining (stopping), and once it leads exactly the shards its latest
// assignment gives it (its share by weight; none when an operator drained
// it), that is, once the first balance is done. The balance is latched:
// later rebalances do not make a running member unready; registration and
// draining are checked every time. Verdicts go to report, from /readyz and
// from follow.
type readiness struct {
	sess   *recipe.Session
	mgr    *partition.Manager
	root   string
	member string
	report func(ready bool) // optional: every verdict

	balanced atomic.Bool   // the first balance was reached
	draining atomic.Bool   // set by drain
	stopping chan struct{} // closed by drain's first call, ends follow
	stopOnce sync.Once
	tellMu   sync.Mutex // orders verdicts with drain's: none says ready after it
}

func newReadiness(sess *recipe.Session, mgr *partition.Manager, root, member string, report func(bool)) *readiness {
	return &readiness{sess: sess, mgr: mgr, root: root, member: member, report: report, stopping: make(chan struct{})}
}

// drain makes the member unready for good: it is stopping.
func (r *readiness) drain() {
	r.tellMu.Lock()
	r.draining.Store(true)
	r.tellMu.Unlock()
	r.stopOnce.Do(func() { close(r.stopping) })
	r.tell(false)
}

// ready evaluates readiness now and reports it; ctx bounds the read.
func (r *readiness) ready(ctx context.Context) bool {
	ok := r.check(ctx)
	if ok {
		r.balanced.Store(true)
	}
	r.tell(ok)
	return ok
}

// follow evaluates readiness every interval (and at once on drain) until
// ctx is done, each evaluation bounded by the interval.
func (r *readiness) follow(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, every)
		r.ready(rctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-r.stopping:
			return // unready for good, already told
		case <-t.C:
		}
	}
}

func (r *readiness) tell(ok bool) {
	r.tellMu.Lock()
	defer r.tellMu.Unlock()
	if r.report != nil {
		r.report(ok && !r.draining.Load())
	}
}

func (r *readiness) check(ctx context.Context) bool {
	if r.draining.Load() {
		return false
	}
	registered, err := r.registered(ctx)
	if err != nil || !registered || r.draining.Load() {
		return false
	}
	if r.balanced.Load() {
		return true
	}
	share, computed := r.mgr.Assigned()
	return computed && len(r.mgr.Leaderships()) == share
}

// registered reports whether the member's znode is an ephemeral of this
// session (a persistent znode, or another session's, is not).
func (r *readiness) registered(ctx context.Context) (bool, error) {
	id := r.sess.ID()
	ok, st, err := r.sess.Exists(ctx, path.Join(r.root, membersDir, r.member))
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return false, nil
	case err != nil:
		return false, err
	}
	return ok && id != 0 && st.EphemeralOwner == id, nil
}

// membersDir is where members register under a root (partition's layout).
const membersDir = "members"
