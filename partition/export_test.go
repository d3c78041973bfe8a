package partition

import (
	"context"
	"time"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/shard"
	"github.com/zkelect/zkelect/recipe"
)

// CampaignUnassigned runs the election of shard on m's session the way a
// running member does, outside any Run, while m's assignment names
// assignedTo for the shard: when its candidate wins, it must pass the shard
// on before any callback runs. done is closed once the runner has returned
// (after passing the shard on, or after stop).
func CampaignUnassigned(m *Manager, shard, assignedTo string) (done <-chan struct{}, stop func()) {
	target := map[string]string{shard: assignedTo}
	l := newLoop(m)
	l.core.Assign.SetTargets(target)
	l.sharedTargets.Store(&target)
	m.run.Store(runState(l))
	l.start(shard)
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		l.workers.Wait()
	}()
	return ch, l.cancel
}

// SessionOf returns the i-th session m's elections run on (0 is the one
// given to NewManager), or nil while m has fewer.
func SessionOf(m *Manager, i int) *recipe.Session {
	return m.pool.Session(i)
}

// UseCuratorNaming makes m name its shards' candidate znodes as releases
// before recipe.ShortNaming did (Curator LeaderLatch's naming), for
// rolling-upgrade tests. Call it before Run.
func UseCuratorNaming(m *Manager) { m.naming = recipe.CuratorNaming() }

// TargetOf returns the member m's latest assignment gives shard ("" before
// Run computed one).
func TargetOf(m *Manager, shard string) string { return m.targetOf(shard) }

// ReservedAfterAssigning computes m's assignment once, outside any Run,
// from a view in which m is live on its session but its own record is
// missing (the others deleted it late in its restart grace), the other
// members (id to session) lead what others says (shard to token), and m
// holds reserved as its reservation. It returns what stays reserved and
// the targets of the shards reserved.
func ReservedAfterAssigning(m *Manager, members map[string]int64, others map[string]map[string]uint64, reserved []string) (kept []string, targets map[string]string) {
	l := newLoop(m)
	defer l.cancel()
	live := map[string]int64{m.cfg.MemberID: m.sess.ID()}
	for id, sess := range members {
		live[id] = sess
		l.view.Apply(rootdata.Update{Member: id, Rec: &rootdata.StoredRecord{Record: rootdata.Record{Session: sess, Leading: others[id]}}})
	}
	l.view.Apply(rootdata.Update{Members: live})
	l.view.OpRead = true
	for _, s := range reserved {
		l.core.Grace.ReserveFor(s, time.Now())
	}
	l.core.Steps.Dirty = true
	l.decide()
	targets = map[string]string{}
	for _, s := range reserved {
		targets[s] = l.core.Assign.Target(s)
		if l.core.Grace.IsReserved(s) {
			kept = append(kept, s)
		}
	}
	return kept, targets
}

// RecordAfterLongSuspension returns the record m's loop would publish
// after a leadership of shard, suspended by a lost connection, stayed
// suspended for longer than a session timeout.
func RecordAfterLongSuspension(m *Manager, shard string) (leading map[string]uint64, reserved []string) {
	l := newLoop(m)
	defer l.cancel()
	now := time.Now()
	l.core.Leading.Start(shard, 7, now)
	l.core.Grace.Suspend(shard, now.Add(-2*m.sess.Timeout()))
	l.carryOutPlan(l.core.Collect(l.facts(now), false, nil))
	rec := l.record()
	return rec.Leading, rec.Reserved
}

// RunHoldingWon is m.Run whose runners call hold(shard) after a campaign
// won while the shard was assigned here, before the leadership starts:
// hold may block while the test moves the shard. The runners' Env is
// wrapped (holdingEnv); nothing in m is changed.
func RunHoldingWon(ctx context.Context, m *Manager, hold func(shard string)) error {
	l, err := m.begin(ctx, release{})
	if err != nil {
		return err
	}
	l.member.Env = holdingEnv{Env: l.member.Env, me: m.cfg.MemberID, hold: hold}
	return l.run(ctx)
}

// holdingEnv is a runner's Env that calls hold when its assignment check
// finds the shard assigned here, before it answers: a runner that won
// its campaign checks its target just before its leadership starts, so
// hold runs between the check and the start (with the answer read before
// hold returns, as if the check came first). Later checks of a shard
// held once (a handoff's, a withdrawal's) may call hold too: hold must
// let them through.
type holdingEnv struct {
	shard.Env
	me   string
	hold func(shard string)
}

func (e holdingEnv) TargetOf(s string) string {
	to := e.Env.TargetOf(s)
	if to == e.me {
		e.hold(s)
	}
	return to
}

// HandLoop is a loop of a Manager driven by hand, outside Run: each Step
// is one of the loop's steps, at the instant the test calls it.
type HandLoop struct{ l *loop }

// NewHandLoop returns m's loop, outside Run, whose latest assignment
// targets assigned to m.
func NewHandLoop(m *Manager, assigned []string) *HandLoop {
	l := newLoop(m)
	targets := map[string]string{}
	for _, s := range assigned {
		targets[s] = m.cfg.MemberID
	}
	l.core.Assign.SetTargets(targets)
	return &HandLoop{l: l}
}

// Step runs one step of the loop now.
func (h *HandLoop) Step() { h.l.step() }

// Reserved returns the shards the record the loop would publish now
// reserves.
func (h *HandLoop) Reserved() []string { return h.l.ownRecord().Reserved }

// Close releases the loop.
func (h *HandLoop) Close() { h.l.cancel() }

// UseFlatLayout makes m create a missing <root>/shards as releases before
// buckets did (no layout data: a flat root), standing for an older
// release's member; on a root that exists it reads the layout as always.
func UseFlatLayout(m *Manager) { m.newLayout = rootdata.Flat }

// RunAsReleaseBeforeBuckets is m.Run standing for a member of a release
// before buckets on any root: it creates a missing root flat, runs its
// elections at <root>/shards/<id> even in a bucketed root (it never read
// <root>/buckets), checks <root>/shards' ACL as it did, and its record
// does not advertise buckets.
func RunAsReleaseBeforeBuckets(ctx context.Context, m *Manager) error {
	m.newLayout = rootdata.Flat
	l, err := m.begin(ctx, release{beforeBuckets: true})
	if err != nil {
		return err
	}
	return l.run(ctx)
}

// EnsureRoot creates root's znodes as a member of this release would (a
// bucketed root when it is new).
func EnsureRoot(ctx context.Context, sess *recipe.Session, root string) error {
	_, err := rootdata.EnsurePaths(ctx, sess, root, zk.WorldACL(zk.PermAll), rootdata.NewRootLayout, 0)
	return err
}
