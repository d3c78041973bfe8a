package partition

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkelect/zkelect/partition/internal/member"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/shard"
)

// This file is the loop's state: the loop itself and the few things
// several stages use of it (wakeIn, background, selfLive, and ownRecord,
// the record it amounts to). The stages (loopnotice.go, loopassign.go, reconcile.go,
// records.go), the plans' carrying out (loopplan.go) and step (loop.go)
// sit above it. Only the loop goroutine touches any of it.

// loop is the state of one Run, owned by its goroutine: the core's
// (member.Core: every decision's state), and what the shell keeps to carry
// the decisions out: the runners, the wake timer, the record last
// published. No state is embedded: every name is the loop's own field.
type loop struct {
	m       *Manager
	view    *rootdata.View
	updates chan rootdata.Update
	events  chan shard.Event
	fatal   chan error

	core *member.Core[*shard.Seat] // the member's decisions' state (member.Core)

	// The runners, the loop's books of them, and the targets handed to
	// them: sharedTargets is the core's targets (member.Assignment.Targets)
	// as the loop last decided them, for the runners (shardEnv.TargetOf)
	// and Manager.Assigned; the map is never changed once stored.
	runners       map[string]*shard.Runner
	books         map[*shard.Runner]*runnerBook // see book
	sharedTargets atomic.Pointer[map[string]string]

	// The timer that wakes the loop for a step put off (the core paces
	// the steps: member.Steps); wakeAt is when it fires, zero when it is
	// stopped.
	wake   *time.Timer
	wakeAt time.Time

	// newShards are the shards without a znode when Run started (see
	// root.NewShards), until the first reconcile has started its runners.
	newShards map[string]bool

	// The member's record (records.go): the session the loop last saw,
	// the record last queued, whether it changed since (beyond the core's
	// Leading), and the members warned about running another shard list,
	// with its digest.
	session       int64
	published     *rootdata.Record
	recordChanged bool
	otherLists    map[string]string

	pub     *rootdata.Publisher
	watch   *rootdata.Watcher
	leaders *notifier       // OnLeaderChanged's; nil without one
	base    context.Context // parent of runner contexts, cancelled last
	cancel  context.CancelFunc
	workers sync.WaitGroup   // runners, callbacks, deletions, the start queue
	starts  shard.StartQueue // runners to start
	member  *shard.Member    // what the runners share (reconcile.go)

	unwithdrawn   unwithdrawn // candidates a stopping member could not withdraw
	beforeBuckets bool        // the run speaks a release before buckets (release, run.go)
}

// runnerBook is what the loop records about a runner.
type runnerBook struct {
	handoff bool      // a handoff was asked: counts against the throttle
	removed bool      // stopped because the shard was removed
	stopAt  time.Time // when the handoff was asked
}

// wakeIn makes the loop run a step in d at the latest.
func (l *loop) wakeIn(d time.Duration) {
	at := time.Now().Add(d)
	if l.wakeAt.IsZero() || at.Before(l.wakeAt) {
		l.wakeAt = at
		l.wake.Reset(d)
	}
}

// facts are the session's facts at now, for the core.
func (l *loop) facts(now time.Time) member.Facts {
	return member.Facts{Now: now, SessionTimeout: l.m.sess.Timeout()}
}

// background runs f on a goroutine that Run waits for.
func (l *loop) background(f func()) {
	l.workers.Add(1)
	go func() { defer l.workers.Done(); f() }()
}

// targetOf returns the member the latest assignment targets shard to, for
// a shard assigned here or run here ("" for another, and before the first
// assignment). Any goroutine may call it.
func (l *loop) targetOf(shard string) string {
	if t := l.sharedTargets.Load(); t != nil {
		return (*t)[shard]
	}
	return ""
}

// assigned returns how many shards the latest assignment targets here;
// false before the first. Any goroutine may call it.
func (l *loop) assigned() (int, bool) {
	t := l.sharedTargets.Load()
	if t == nil {
		return 0, false
	}
	n := 0
	for _, member := range *t {
		if member == l.m.cfg.MemberID {
			n++
		}
	}
	return n, true
}

// selfLive reports whether the view shows this member registered by the
// current session.
func (l *loop) selfLive() bool {
	sess, ok := l.view.Members[l.m.cfg.MemberID]
	return ok && sess == l.m.sess.ID()
}

// ownRecord is the member's record now, sharing the loop's leadership map
// (read it only while the loop does not change it).
func (l *loop) ownRecord() rootdata.Record {
	rec := rootdata.Record{
		Session: l.m.sess.ID(), Leading: l.core.Leading.Map(), ShardSet: l.m.currentShardSet(),
		Address: l.m.cfg.Address, Labels: l.m.cfg.Labels, Weight: l.m.cfg.Weight,
		Buckets: !l.beforeBuckets, Migrate: !l.beforeBuckets,
	}
	for s := range l.core.Grace.Reserved() {
		if !l.core.Leading.Leads(s) {
			rec.Reserved = append(rec.Reserved, s)
		}
	}
	slices.Sort(rec.Reserved)
	rec.Unavailable = l.core.Unavailable()
	return rec
}

// unwithdrawn counts the shards whose candidate a stopping member could
// not withdraw (its znode delete unconfirmed within the close timeout, as
// with ZooKeeper out of reach): the server deletes those znodes when the
// session ends. Only the loop goroutine uses it.
type unwithdrawn struct {
	n     int
	first error
}

// add counts one shard whose candidate's Close failed with err.
func (u *unwithdrawn) add(err error) {
	if u.n == 0 {
		u.first = err
	}
	u.n++
}
