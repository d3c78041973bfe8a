package partition

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// This file is the manager's control loop: one goroutine that owns the
// observed state, computes the assignment, and starts, stops and hands off
// the shard runners (shard.go). Runners and watchers talk to it through
// channels only.

// loop is the state of one Run.
type loop struct {
	m       *Manager
	view    *view
	updates chan update
	events  chan runnerEvent
	fatal   chan error
	slots   chan struct{} // MaxInFlight election starts

	runners  map[string]*runner
	leading  map[string]uint64    // shards whose runner reported started, with their tokens
	handoffs int                  // balancing handoffs in flight
	queue    []string             // settled handoffs waiting for the throttle
	moving   map[string]time.Time // led here, assigned elsewhere since
	wake     *time.Timer          // wakes the loop for a settled move or a deferred step
	wakeAt   time.Time            // when wake fires; zero when it is stopped
	lastStep time.Time            // when the assignment was last computed or acted on
	stepGap  time.Duration        // least time between two steps
	targets  map[string]string
	dirty    bool // the view or the shard list changed: recompute
	stale    bool // runners changed: reconcile

	reserved      map[string]bool // shards an earlier session of ours led
	reservedUntil time.Time
	absentSince   map[string]time.Time // records of members not live
	collecting    map[string]int32     // record deletions issued, by version
	session       int64                // the session the loop last saw
	published     *record
	recordChanged bool      // leading or reserved changed since published
	lastPublish   time.Time // when the record was last queued

	pub     *publisher
	watch   *watcher
	base    context.Context // parent of runner contexts, cancelled last
	cancel  context.CancelFunc
	workers sync.WaitGroup // runners, callbacks, deletions
}

// eventKind says what a runner reports.
type eventKind uint8

const (
	evStarted  eventKind = iota // leadership accepted, OnStartedLeading called
	evStopped                   // leadership over, OnStoppedLeading returned
	evFinished                  // runner returned; its candidate is closed
)

type runnerEvent struct {
	r     *runner
	kind  eventKind
	token uint64 // evStarted: the leadership's token
}

// settleDelay is how long a shard led here must stay assigned elsewhere
// before it is handed off. Records lag behind leaderships by up to a
// publish interval, so an assignment computed during a burst of changes can
// name a member that no longer (or not yet) holds a shard; waiting for it to
// settle avoids handing a shard over and back.
const settleDelay = 4 * publishInterval

func newLoop(m *Manager) *loop {
	base, cancel := context.WithCancel(context.Background())
	updates := make(chan update, 64)
	return &loop{
		m:           m,
		view:        newView(m.cfg.RestartGrace >= 0),
		updates:     updates,
		events:      make(chan runnerEvent, 1024),
		fatal:       make(chan error, 1),
		slots:       make(chan struct{}, m.cfg.MaxInFlight),
		runners:     map[string]*runner{},
		leading:     map[string]uint64{},
		moving:      map[string]time.Time{},
		targets:     map[string]string{},
		reserved:    map[string]bool{},
		absentSince: map[string]time.Time{},
		collecting:  map[string]int32{},
		pub:         newPublisher(m.conn, m.recordPath(), m.log),
		watch: &watcher{
			conn: m.conn, members: path.Join(m.root, membersDir), owners: path.Join(m.root, ownersDir),
			out: updates, log: m.log,
		},
		base:   base,
		cancel: cancel,
	}
}

// run is Run after registration.
func (l *loop) run(ctx context.Context) error {
	defer l.cancel()
	l.adoptOwnRecord()
	bg, stopBackground := context.WithCancel(context.Background())
	var bgWG sync.WaitGroup
	l.watch.start(bg)
	l.pub.start(bg)
	bgWG.Add(1)
	go func() {
		defer bgWG.Done()
		keepRegistered(bg, l.m.conn, l.m.memberPath(), l.m.sess.ID, l.m.log, l.fail)
	}()
	err := l.serve(ctx)
	l.shutdown(stopBackground, &bgWG)
	return err
}

// serve handles events until ctx is done, a duplicate member shows up, or
// the session is closed.
func (l *loop) serve(ctx context.Context) error {
	tick := time.NewTicker(l.collectEvery())
	defer tick.Stop()
	l.wake = time.NewTimer(time.Hour)
	l.wake.Stop()
	defer l.wake.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-l.fatal:
			return err
		case <-l.m.sess.Done():
			return fmt.Errorf("partition: %w", recipe.ErrSessionClosed)
		case u := <-l.updates:
			l.apply(u)
		case ev := <-l.events:
			l.handle(ev)
		case <-l.m.changed:
			l.dirty = true
		case <-tick.C:
			l.collect(time.Now())
		case <-l.wake.C:
			l.wakeAt = time.Time{}
			l.stale = l.stale || len(l.moving) > 0
		}
		l.drain()
		l.step()
	}
}

// drain handles whatever else is queued, so that one assignment covers a
// burst of changes.
func (l *loop) drain() {
	for range 4096 {
		select {
		case u := <-l.updates:
			l.apply(u)
		case ev := <-l.events:
			l.handle(ev)
		default:
			return
		}
	}
}

// minStep spaces out the loop's steps: computing the assignment and
// walking every shard costs milliseconds at 10,000 shards, and during a
// cold start records and runners change hundreds of times a second. A step
// also waits stepCostFactor times as long as the previous one took, so the
// loop spends at most a tenth of its time on them.
const (
	minStep        = 20 * time.Millisecond
	stepCostFactor = 10
)

// step recomputes the assignment if the state changed and acts on it, at
// most once per minStep, and publishes the record.
func (l *loop) step() {
	l.noticeSession()
	defer l.publish()
	if !l.dirty && !l.stale {
		return
	}
	if wait := l.stepGap - time.Since(l.lastStep); wait > 0 {
		l.wakeIn(wait)
		return
	}
	l.lastStep = time.Now()
	if l.dirty {
		l.recompute()
	}
	if l.stale {
		l.reconcile()
	}
	l.stepGap = max(minStep, stepCostFactor*time.Since(l.lastStep))
}

// noticeSession reserves the shards assigned here when the session changes
// (the old one expired): this member comes back with new znodes, like a
// restart, and should get the same shards back within the restart grace.
func (l *loop) noticeSession() {
	id := l.m.sess.ID()
	if id == 0 || id == l.session {
		return
	}
	if l.session != 0 && l.m.cfg.RestartGrace >= 0 {
		for s, m := range l.targets {
			if m == l.m.cfg.MemberID {
				l.reserved[s] = true
			}
		}
		l.reservedUntil = time.Now().Add(l.m.cfg.RestartGrace)
		l.recordChanged = true
		l.m.log.Info().Int64("session_id", id).Int("shards", len(l.reserved)).Msg("new session: shards reserved")
	}
	l.session = id
}

// fail reports an error that ends Run.
func (l *loop) fail(err error) {
	select {
	case l.fatal <- err:
	default:
	}
}

// apply merges a watcher's update into the view.
func (l *loop) apply(u update) {
	l.dirty = true
	switch {
	case u.members != nil:
		l.view.members = u.members
		l.collect(time.Now())
	case u.rec == nil:
		delete(l.view.records, u.member)
		delete(l.absentSince, u.member)
		delete(l.collecting, u.member)
	default:
		l.view.records[u.member] = *u.rec
	}
}

// handle records a runner's report.
func (l *loop) handle(ev runnerEvent) {
	r := ev.r
	switch ev.kind {
	case evStarted:
		l.leading[r.id] = ev.token
		delete(l.reserved, r.id)
		l.recordChanged = true
	case evStopped:
		delete(l.leading, r.id)
		l.recordChanged = true
	case evFinished:
		delete(l.leading, r.id)
		delete(l.moving, r.id)
		if l.runners[r.id] == r {
			delete(l.runners, r.id)
		}
		if r.handoff {
			l.handoffs--
			l.m.met.handoffs.Observe(time.Since(r.stopAt).Seconds())
			l.nextHandoffs()
		}
		if r.removed {
			l.deleteShard(r.id)
		}
		l.stale = true
	}
}

// recompute computes the assignment from the view.
func (l *loop) recompute() {
	l.dirty = false
	if !l.selfLive() {
		return // our session is being replaced: keep everything as it is
	}
	cur, tokens := l.view.current()
	l.targets = Assign(Input{
		Shards:  l.m.currentShards(),
		Members: l.view.liveMembers(),
		Current: cur,
		Tokens:  tokens,
	})
	targets := l.targets
	l.m.target.Store(&targets)
	l.m.met.assignments.Inc()
	l.stale = true
}

// selfLive reports whether the view shows this member registered by the
// current session.
func (l *loop) selfLive() bool {
	sess, ok := l.view.members[l.m.cfg.MemberID]
	return ok && sess == l.m.sess.ID()
}

// reconcile starts runners for shards assigned here, withdraws the others,
// hands off leaderships assigned elsewhere (at most MaxConcurrentHandoffs
// at once) and stops the runners of removed shards.
func (l *loop) reconcile() {
	if !l.selfLive() {
		return
	}
	l.stale = false
	l.queue = l.queue[:0]
	me, now := l.m.cfg.MemberID, time.Now()
	wanted := map[string]bool{}
	for _, s := range l.m.currentShards() {
		wanted[s] = true
		r := l.runners[s]
		_, leading := l.leading[s]
		if l.targets[s] == me || r == nil || !leading {
			delete(l.moving, s)
		}
		switch {
		case l.targets[s] == me && r == nil:
			l.start(s)
		case l.targets[s] == me || r == nil || r.stopping():
		case !leading:
			r.stop(errWithdrawn)
		case !l.settled(s, now):
		default:
			l.queue = append(l.queue, s)
		}
	}
	l.nextHandoffs()
	for s, r := range l.runners {
		if !wanted[s] && !r.stopping() {
			r.removed = true
			r.stop(ErrShardRemoved)
		}
	}
}

// nextHandoffs starts queued handoffs while fewer than
// MaxConcurrentHandoffs run, so a finished handoff is followed by the next
// one at once, not at the next step. Entries that are no longer due are
// skipped.
func (l *loop) nextHandoffs() {
	for l.handoffs < l.m.cfg.MaxConcurrentHandoffs && len(l.queue) > 0 {
		s := l.queue[0]
		l.queue = l.queue[1:]
		r := l.runners[s]
		_, leading := l.leading[s]
		if r == nil || !leading || r.stopping() || l.targets[s] == l.m.cfg.MemberID {
			continue
		}
		l.handoffs++
		r.handoff = true
		r.stopAt = time.Now()
		r.stop(ErrHandoff)
	}
}

// settled reports whether shard s, led here, has been assigned elsewhere
// for settleDelay; otherwise it arms the settle timer to look again.
func (l *loop) settled(s string, now time.Time) bool {
	since, ok := l.moving[s]
	if !ok {
		since = now
		l.moving[s] = now
	}
	if now.Sub(since) >= settleDelay {
		return true
	}
	l.wakeIn(settleDelay - now.Sub(since))
	return false
}

// wakeIn makes the loop run a step in d at the latest.
func (l *loop) wakeIn(d time.Duration) {
	at := time.Now().Add(d)
	if l.wakeAt.IsZero() || at.Before(l.wakeAt) {
		l.wakeAt = at
		l.wake.Reset(d)
	}
}

// start launches the runner of shard s.
func (l *loop) start(s string) {
	r := newRunner(l.base, s)
	l.runners[s] = r
	l.workers.Add(1)
	go func() {
		defer l.workers.Done()
		l.runShard(r)
		l.report(r, evFinished, 0)
	}()
}

// report sends a runner event to the loop, which drains events until every
// runner has finished.
func (l *loop) report(r *runner, kind eventKind, token uint64) {
	l.events <- runnerEvent{r, kind, token}
}

// publish queues the member's record if it changed, at most once per
// publishInterval.
func (l *loop) publish() {
	if !l.recordChanged && l.published != nil && l.published.Session == l.m.sess.ID() {
		return
	}
	if wait := publishInterval - time.Since(l.lastPublish); wait > 0 {
		l.wakeIn(wait)
		return
	}
	rec := l.record()
	l.published, l.recordChanged, l.lastPublish = &rec, false, time.Now()
	l.pub.set(rec)
}

// record is the member's record now.
func (l *loop) record() record {
	rec := record{Session: l.m.sess.ID(), Leading: maps.Clone(l.leading)}
	for s := range l.reserved {
		if _, led := l.leading[s]; !led {
			rec.Reserved = append(rec.Reserved, s)
		}
	}
	slices.Sort(rec.Reserved)
	return rec
}

// adoptOwnRecord reads the record an earlier session of this member left:
// its shards are reserved for us until the restart grace passes.
func (l *loop) adoptOwnRecord() {
	data, _, err := l.m.conn.Get(l.m.recordPath())
	if err != nil {
		return // none (or unreadable: we start without a reservation)
	}
	rec, err := decodeRecord(data)
	if err != nil || rec.Session == l.m.sess.ID() || l.m.cfg.RestartGrace < 0 {
		return
	}
	for s := range rec.Leading {
		l.reserved[s] = true
	}
	for _, s := range rec.Reserved {
		l.reserved[s] = true
	}
	l.reservedUntil = time.Now().Add(l.m.cfg.RestartGrace)
	l.m.log.Info().Int("shards", len(l.reserved)).Msg("restarted within grace: shards reserved")
}

// collectEvery is the period of collect.
func (l *loop) collectEvery() time.Duration {
	return min(max(l.m.cfg.RestartGrace/4, 50*time.Millisecond), time.Second)
}

// collect deletes the records of members absent for longer than the
// restart grace (version-checked, so a member that came back and rewrote
// its record keeps it) and ends our own reservation when its grace is over.
func (l *loop) collect(now time.Time) {
	if len(l.reserved) > 0 && now.After(l.reservedUntil) {
		clear(l.reserved)
		l.recordChanged = true
	}
	if !l.selfLive() {
		return
	}
	for id, rec := range l.view.records {
		if _, live := l.view.members[id]; live {
			delete(l.absentSince, id)
			continue
		}
		since, seen := l.absentSince[id]
		if !seen {
			since = now
			l.absentSince[id] = now
		}
		if v, issued := l.collecting[id]; (issued && v == rec.version) || now.Sub(since) < l.m.cfg.RestartGrace {
			continue
		}
		l.collecting[id] = rec.version
		l.background(func() {
			err := l.m.conn.Delete(path.Join(l.m.root, ownersDir, id), rec.version)
			if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				l.m.log.Warn().Err(err).Str("absent_member", id).Msg("delete record after restart grace")
			}
		})
	}
}

// deleteShard deletes a removed shard's election znode; it stays while
// other members' candidates are still in it (the last one out deletes it).
func (l *loop) deleteShard(s string) {
	l.background(func() {
		err := l.m.conn.Delete(l.m.shardPath(s), -1)
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			l.m.log.Warn().Err(err).Str("shard", s).Msg("delete removed shard")
		}
	})
}

// background runs f on a goroutine that Run waits for.
func (l *loop) background(f func()) {
	l.workers.Add(1)
	go func() { defer l.workers.Done(); f() }()
}

// shutdown leaves gracefully: it records what we lead (reserved for our
// restart grace), unregisters so others start taking over, then resigns
// every shard (all at once: a stop is not throttled) and waits for every
// goroutine of the run.
func (l *loop) shutdown(stopBackground context.CancelFunc, bg *sync.WaitGroup) {
	stopBackground()
	bg.Wait()
	l.watch.wait()
	l.pub.wait()
	l.writeFinalRecord()
	l.unregister()
	for _, r := range l.runners {
		if !r.stopping() {
			r.stop(ErrStopping)
		}
	}
	for len(l.runners) > 0 {
		l.handle(<-l.events)
	}
	l.cancel()
	l.workers.Wait()
}

// writeFinalRecord stores the shards we lead and those still reserved for
// us, as a reservation for our next session.
func (l *loop) writeFinalRecord() {
	rec := l.record()
	for _, s := range rec.Reserved {
		rec.Leading[s] = 0
	}
	rec.Reserved = nil
	if err := l.pub.write(rec); err != nil {
		l.m.log.Warn().Err(err).Msg("write final record")
	}
}

// unregister deletes the member znode if our session owns it.
func (l *loop) unregister() {
	p := l.m.memberPath()
	ok, st, err := l.m.conn.Exists(p)
	if err == nil && ok && st.EphemeralOwner == l.m.sess.ID() {
		err = l.m.conn.Delete(p, st.Version)
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		l.m.log.Warn().Err(err).Msg("unregister member")
	}
}
