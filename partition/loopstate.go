package partition

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
	"github.com/zkelect/zkelect/partition/internal/member"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/shard"
)

// This file is the loop's state: the loop itself, its state by concern
// (the loop embeds each), and the few things several stages use of it
// (wakeIn, background, selfLive, and ownRecord, the record it amounts to). The stages (loopnotice.go, loopassign.go,
// reconcile.go, looppublish.go) and step (loop.go) sit above it. Only the
// loop goroutine touches any of it.

// loop is the state of one Run, owned by its goroutine. Its state is
// split by concern: the shards' runners and leaderships (shardState), the
// balancing handoffs (member.Handoffs), the pacing of its steps
// (stepState), the startup wait (startupState) and the records it
// publishes and collects (recordState).
type loop struct {
	m       *Manager
	view    *view
	updates chan update
	events  chan shard.Event
	fatal   chan error

	shardState
	stepState
	handoffs member.Handoffs // balancing handoffs: settling, queued for the throttle, in flight
	steps    member.Steps    // what changed since the last step, and its pacing
	startup  member.Startup  // the startup wait (see StartupSettle)
	startupState
	recordState

	pub     *rootdata.Publisher
	watch   *watcher
	leaders *notifier       // OnLeaderChanged's; nil without one
	base    context.Context // parent of runner contexts, cancelled last
	cancel  context.CancelFunc
	workers sync.WaitGroup   // runners, callbacks, deletions, the start queue
	starts  shard.StartQueue // runners to start
	member  *shard.Member    // what the runners share (shardenv.go)

	unwithdrawn unwithdrawn // candidates a stopping member could not withdraw
	assigning   assigning   // the assignment kept from changes (loopassign.go)
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
	leading member.Leaderships            // shards whose runner reported started, with their tokens (and the record's change)
	// grace: the shards reserved for us, and those in leading whose
	// leadership ended for a lost connection while their candidate stays
	// first in the election (the record keeps claiming them: see
	// holdSuspended).
	grace    member.Grace
	orphaned map[string]time.Time // shards whose leader's member we saw gone, and when (failover metric)
	targets  map[string]string    // the latest assignment's shards targeted here or run here (concerningUs)
	// unavail: the shards whose sibling session is down (loopliveness.go),
	// and what the loop saw of each sibling session.
	unavail    member.Unavailable[*shard.Seat]
	unseated   member.Unseated // shards whose election found no session (loopliveness.go)
	seatHealth map[*shard.Seat]*member.SeatHealth
	clearing   map[string]bool // moves being cleared: ours done, or void (loopoperator.go, moveexpiry.go)
	freeze     member.Freeze   // the freeze the last assignment honoured
}

// assigning is the loop's assignment kept from changes; the first step
// sets it up (Track on the view: O(records) once; loopassign.go).
type assigning struct {
	assigner *assign.Assigner
	listOf   []string // the shard list last given to SetShards
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

// recordState is the member's published record and what the loop keeps
// about the others' (records.go, collect.go).
type recordState struct {
	session       int64 // the session the loop last saw
	published     *record
	recordChanged bool                 // leading or reserved changed since published
	absentSince   map[string]time.Time // records of members not live
	collecting    map[string]int32     // record deletions issued, by version
	otherLists    map[string]string    // members warned about running another shard list, with its digest
}

// background runs f on a goroutine that Run waits for.
func (l *loop) background(f func()) {
	l.workers.Add(1)
	go func() { defer l.workers.Done(); f() }()
}

// selfLive reports whether the view shows this member registered by the
// current session.
func (l *loop) selfLive() bool {
	sess, ok := l.view.Members[l.m.cfg.MemberID]
	return ok && sess == l.m.sess.ID()
}

// ownRecord is the member's record now, sharing the loop's leadership map
// (read it only while the loop does not change it).
func (l *loop) ownRecord() record {
	rec := record{
		Session: l.m.sess.ID(), Leading: l.leading.Map(), ShardSet: l.m.currentShardSet(),
		Address: l.m.cfg.Address, Labels: l.m.cfg.Labels, Weight: l.m.cfg.Weight,
		Buckets: !l.m.preBuckets, Migrate: !l.m.preBuckets,
	}
	for s := range l.grace.Reserved() {
		if !l.leading.Leads(s) {
			rec.Reserved = append(rec.Reserved, s)
		}
	}
	slices.Sort(rec.Reserved)
	rec.Unavailable = l.ownUnavailable()
	return rec
}

// ownUnavailable returns the shards this member publishes as unavailable,
// sorted: those on a down session and those without one.
func (l *loop) ownUnavailable() []string {
	if len(l.unseated) == 0 {
		return l.unavail.List()
	}
	out := l.unavail.List()
	for s := range l.unseated {
		if _, dup := l.unavail[s]; !dup {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
