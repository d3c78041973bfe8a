package partition

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/recipe"
)

// This file is where a shard's election is, as a tool (ElectionPath) and
// a member see the root's layout (partition/internal/root/layout.go):
// bucketed, flat (an older release's), or moving from flat to buckets.
//
// The move is a member's side of it here (the steps and the argument that
// a shard never has two leaders are in partition/internal/root/migration.go).
// While the root's layout is marked FromFlat, a shard runs in no flat
// election: the loop reconciles only the shards whose flat election this
// member saw gone (runnable), so a flat runner is stopped as a removed
// shard's is (its leadership ends gracefully, then the flat election is
// deleted), and followMigration deletes the flat elections of the shards
// dealt here and marks each one gone, after which its election is the
// bucketed one (electionPath) and the loop starts its runner there.
//
// Members of releases before buckets are kept out of a bucketed root's
// assignment (campaignsFlat): such a member campaigns at
// <root>/shards/<id>, which a bucketed root refuses (see
// partition/internal/root/shardslock.go), so a shard dealt to it would
// stay without a leader.

// ElectionPath returns the znode of shard's election under root, for a
// tool that watches or reads one shard (recipe.Observe, Participants):
// <root>/buckets/<bucket>/<shard> in a root with buckets (every root this
// release creates: the bucket is a fixed hash of the shard id),
// <root>/shards/<shard> in a flat root an older release created (and,
// while such a root moves to buckets, until that election is gone). It reads
// the root's layout from the data of <root>/buckets; a root not created
// yet has the layout this release would create. Errors: ErrNilSession,
// ErrInvalidRoot, ErrInvalidShardID, an error wrapping
// rootdata's unknown-layout error for a root of a later release, and
// ZooKeeper's, wrapped with the path.
func ElectionPath(ctx context.Context, sess *recipe.Session, root, shard string) (string, error) {
	switch {
	case sess == nil:
		return "", ErrNilSession
	case rootdata.ValidateRoot(root) != nil:
		return "", rootdata.ValidateRoot(root)
	case rootdata.ValidateID(shard) != nil:
		return "", rootdata.ValidateID(shard)
	}
	l, err := rootdata.ReadLayout(ctx, sess, root)
	if errors.Is(err, zk.ErrNoNode) {
		l, err = rootdata.NewRootLayout, nil
	}
	if err != nil {
		return "", fmt.Errorf("partition: %w", err)
	}
	p, err := l.ElectionOf(ctx, sess, root, shard) // flat while the root moves, until its flat election is gone
	if err != nil {
		return "", fmt.Errorf("partition: %w", err)
	}
	return p, nil
}

// ErrMovedToBuckets is the reason OnStoppedLeading gets when a leadership
// in a flat election ends because the root moves to buckets; the shard's
// next leadership, here or elsewhere, is in its bucketed election, with a
// larger token. It wraps ErrShardRemoved (the leadership ends as a
// removed shard's does).
var ErrMovedToBuckets = fmt.Errorf("%w from its flat election: the root moves to buckets", ErrShardRemoved)

// migrationPoll spaces out a member's passes over the flat elections of
// its shards while the root moves to buckets: a leadership handed from a
// flat election to the bucketed one is without a leader for about that
// long, plus a few round trips.
const migrationPoll = 50 * time.Millisecond

// electionPath is the election znode of shard id: flat while the root
// moves to buckets and this member has not seen the flat election gone,
// the root's layout's otherwise.
func (m *Manager) electionPath(id string) string {
	l := m.rootLayout()
	if l.Migrating() && !m.flatGone(id) {
		return rootdata.Flat.ShardPath(m.root, id)
	}
	return l.ShardPath(m.root, id)
}

// shardPath is the election path of shard id: every shard's path comes
// from here, through the root's layout (rootdata.Layout.ShardPath).
func (m *Manager) shardPath(id string) string { return m.electionPath(id) }

// runnerPath is electionPath for a runner's candidate: a flat path is
// noted (flatRunners) until the runner finishes (runnerGone), so that
// followMigration does not delete a flat election while this member's own
// candidate may still be on its way into it: a candidate created after the
// delete would find no flat election and, <root>/shards refusing creates,
// campaign in vain on a path it cannot leave.
func (m *Manager) runnerPath(id string) string {
	l := m.rootLayout()
	if l.Bucketed() && (!l.Migrating() || m.flatGone(id)) {
		return l.ShardPath(m.root, id)
	}
	// Noted before the path is returned: a flat election deleted after
	// this makes runnable stop the runner and start it again in buckets.
	m.flatRunners.Store(id, struct{}{})
	return rootdata.Flat.ShardPath(m.root, id)
}

// runnerGone notes that this member's runner of shard id finished.
func (m *Manager) runnerGone(id string) { m.flatRunners.Delete(id) }

// flatGone reports whether this member saw shard id's flat election gone.
func (m *Manager) flatGone(id string) bool {
	_, ok := m.movedShards.Load(id)
	return ok
}

// likelyNewBucketed reports whether shard s's bucketed election is likely
// not to exist yet: the root moves to buckets and s's flat election is
// gone. Its runner's first create then makes the election's znode in the
// same transaction (a wrong guess costs one failed transaction).
func (m *Manager) likelyNewBucketed(s string) bool {
	return m.rootLayout().Migrating() && m.flatGone(s)
}

// runnableShard reports whether shard s may be run now: always in a flat
// root; in a bucketed one, unless its runner is on the flat election or
// the root is moving to buckets and s has not moved yet.
func (m *Manager) runnableShard(s string) bool {
	l := m.rootLayout()
	return !l.Bucketed() || !m.onFlat(s) && (!l.Migrating() || m.flatGone(s))
}

// onFlat reports whether this member's runner of shard s was given its
// flat election: in a bucketed root (moving, or moved while the runner's
// candidate was on its way) that runner is stopped and started again on
// the bucketed election.
func (m *Manager) onFlat(s string) bool {
	_, ok := m.flatRunners.Load(s)
	return ok
}

// removalReason is why the loop stops the runner of a shard it no longer
// runs: ErrMovedToBuckets while the root moves, ErrShardRemoved otherwise.
func (m *Manager) removalReason(s string) error {
	if m.rootLayout().Migrating() && !m.flatGone(s) || m.rootLayout().Bucketed() && m.onFlat(s) {
		return ErrMovedToBuckets
	}
	return ErrShardRemoved
}

// followMigration runs while Run does (until ctx ends): on a flat root it
// waits for <root>/buckets to appear (awaitMigration), and while the root moves to buckets
// it deletes, every migrationPoll, the flat elections of the shards dealt
// here that are still there, until the root's layout is bucketed. Each
// change is signalled to the loop as a change of the shard list, so that
// it reconciles at once.
func (m *Manager) followMigration(ctx context.Context) {
	if m.preBuckets || m.rootLayout().Bucketed() && !m.rootLayout().Migrating() {
		return
	}
	if !m.awaitMigration(ctx) {
		return
	}
	tick := time.NewTicker(migrationPoll)
	defer tick.Stop()
	var lastFinish time.Time
	for {
		done, err := m.migrationPass(ctx, &lastFinish)
		if err != nil && ctx.Err() == nil {
			m.log.Warn().Err(err).Msg("follow the root's move to buckets")
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// awaitMigration waits, on a flat root, until <root>/buckets appears (an
// exists watch: a flat root that never moves costs one watch), and
// reports false if ctx ended first.
func (m *Manager) awaitMigration(ctx context.Context) bool {
	if m.rootLayout().Bucketed() {
		return true
	}
	retry := rootdata.NewBackoff()
	for ctx.Err() == nil {
		ok, _, ch, err := m.sess.ExistsW(ctx, rootdata.BucketsPath(m.root))
		switch {
		case err != nil:
			m.log.Warn().Err(err).Msg("watch for the root's move to buckets")
			retry.Wait(ctx)
		case ok:
			return true
		default:
			retry.Reset()
			rootdata.WaitWatch(ctx, ch)
		}
	}
	return false
}

// migrationPass is one pass of followMigration; done once the root is
// bucketed. With none of its shards left in flat, it tries to end the
// move (FinishMigration) at most every finishEvery (lastFinish: the last
// try).
func (m *Manager) migrationPass(ctx context.Context, lastFinish *time.Time) (done bool, err error) {
	l, err := rootdata.ReadLayout(ctx, m.sess, m.root)
	if err != nil {
		return false, err
	}
	if cur := m.rootLayout(); l != cur {
		m.layout.Store(&l)
		m.log.Info().Stringer("layout", l).Stringer("was", cur).Msg("the root's shard layout changed")
		m.signalChanged()
	}
	if !l.Migrating() {
		return l.Bucketed(), nil
	}
	gone, pending := 0, 0
	for _, s := range m.currentShards() {
		if m.flatGone(s) || m.targetOf(s) != m.cfg.MemberID {
			continue
		}
		pending++
		if m.onFlat(s) {
			continue // the loop stops it first (runnable)
		}
		ok, err := rootdata.DeleteFlatElection(ctx, m.sess, m.root, s)
		if err != nil {
			return false, err
		}
		if ok {
			m.movedShards.Store(s, struct{}{})
			gone++
		}
	}
	if gone > 0 {
		m.signalChanged()
	}
	if pending == gone && m.target.Load() != nil && time.Since(*lastFinish) >= finishEvery {
		// Nothing of ours is left in flat: end the move if nobody's is.
		*lastFinish = time.Now()
		_, err = rootdata.FinishMigration(ctx, m.sess, m.root)
	}
	return false, err
}

// finishEvery spaces out a member's tries to end the move to buckets
// (FinishMigration: two reads) once none of its shards is left in flat.
const finishEvery = time.Second

// signalChanged wakes the loop as SetShards does.
func (m *Manager) signalChanged() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// checkRootACL checks the ACLs of the root's znodes as Config.ACLCheck
// says (rootdata.ACLChecker), skipping a <root>/shards this release locked
// when this member runs the root bucketed.
func (m *Manager) checkRootACL(ctx context.Context) error {
	return rootdata.ACLChecker{
		Session: m.sess, Root: m.root, ACL: m.cfg.ACL, Mode: m.cfg.ACLCheck,
		Bucketed: m.rootLayout().Bucketed() && !m.preBuckets, Log: m.log,
	}.Check(ctx)
}

// campaignsFlat reports whether r, the record of a live member, is one of
// a release before buckets while the root is bucketed: its elections are
// not the root's, and it is dealt no shard.
func (m *Manager) campaignsFlat(r rootdata.Record) bool {
	return !r.Buckets && m.rootLayout().Bucketed()
}
