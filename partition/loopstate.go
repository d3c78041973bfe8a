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

// This file is the loop's state: the loop itself, its state by concern
// (the loop embeds each), and the few things several stages use of it
// (wakeIn, background, selfLive, and ownRecord, the record it amounts
// to). The stages (loopnotice.go, loopassign.go, reconcile.go,
// records.go), the plans' carrying out (loopplan.go) and step (loop.go)
// sit above it. Only the loop goroutine touches any of it.

// loop is the state of one Run, owned by its goroutine. Its state is
// split by concern: the core's (member.Core: leaderships, grace,
// handoffs, unavailability, the assignment and its targets, the records
// to collect), the runners and the targets handed to them (shardState),
// the pacing of its steps (stepState), the startup wait (startupState)
// and the records it publishes and collects (recordState).
type loop struct {
	m       *Manager
	view    *rootdata.View
	updates chan rootdata.Update
	events  chan shard.Event
	fatal   chan error

	core *member.Core[*shard.Seat] // the member's decisions' state (member.Core: Report, Step)
	shardState
	stepState
	startupState
	recordState

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

// shardState is what the loop knows of its shards' elections and the
// assignment it acts on.
type shardState struct {
	runners map[string]*shard.Runner
	books   map[*shard.Runner]*runnerBook // the loop's records of its runners (see book)
	// sharedTargets is the core's targets (member.Assignment.Targets) as
	// the loop last decided them, for the runners (shardEnv.TargetOf) and
	// Manager.Assigned: the map is never changed once stored.
	sharedTargets atomic.Pointer[map[string]string]
}

// stepState is the shell's side of the steps' pacing (member.Steps
// decides it): the timer that wakes the loop for a step put off.
type stepState struct {
	wake   *time.Timer // wakes the loop for a settled move or a deferred step
	wakeAt time.Time   // when wake fires; zero when it is stopped
}

// wakeIn makes the loop run a step in d at the latest.
func (s *stepState) wakeIn(d time.Duration) {
	at := time.Now().Add(d)
	if s.wakeAt.IsZero() || at.Before(s.wakeAt) {
		s.wakeAt = at
		s.wake.Reset(d)
	}
}

// startupState is what the loop keeps beside the startup wait
// (member.Startup).
type startupState struct {
	// newShards are the shards without a znode when Run started (see
	// root.NewShards), until the first reconcile has started its runners.
	newShards map[string]bool
}

// recordState is the member's published record and the other members
// warned about (records.go).
type recordState struct {
	session       int64 // the session the loop last saw
	published     *rootdata.Record
	recordChanged bool              // leading or reserved changed since published
	otherLists    map[string]string // members warned about running another shard list, with its digest
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
