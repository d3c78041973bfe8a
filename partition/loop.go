package partition

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/retry"
	"github.com/zkelect/zkelect/partition/internal/member"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/shard"
	"github.com/zkelect/zkelect/recipe"
)

// This file is the manager's control loop: one goroutine that owns the
// observed state (loopstate.go), computes the assignment, and starts,
// stops and hands off the shard runners (partition/internal/shard), one
// step of its stages at a time (step). Runners and watchers talk to it
// through channels only.

func newLoop(m *Manager) *loop {
	base, cancel := context.WithCancel(context.Background())
	updates := make(chan update, 64)
	var leaders *notifier
	if f := m.cfg.OnLeaderChanged; f != nil {
		leaders = newNotifier(f)
	}
	l := &loop{
		m:       m,
		view:    rootdata.NewView(m.cfg.RestartGrace >= 0),
		updates: updates,
		events:  make(chan shard.Event, 1024),
		fatal:   make(chan error, 1),
		shardState: shardState{
			runners: map[string]*shard.Runner{}, books: map[*shard.Runner]*runnerBook{},
			leading: member.NewLeaderships(), grace: member.NewGrace(m.cfg.RestartGrace),
			orphaned: map[string]time.Time{}, targets: map[string]string{}, clearing: map[string]bool{},
			unavail: member.Unavailable[*shard.Seat]{}, unseated: member.Unseated{}, seatHealth: map[*shard.Seat]*member.SeatHealth{},
		},
		handoffs:  member.NewHandoffs(),
		stepState: stepState{wake: stoppedTimer()},
		startup:   member.NewStartup(time.Now()),
		recordState: recordState{
			absentSince: map[string]time.Time{}, collecting: map[string]int32{}, otherLists: map[string]string{},
		},
		pub:     m.newPublisher(),
		watch:   rootdata.NewWatcher(m.sess, m.root, updates, m.log).Within(m.bounds, m.cfg.MemberID, m.met.setRefused),
		leaders: leaders,
		base:    base,
		cancel:  cancel,
	}
	l.starts.Workers = &l.workers
	l.member = l.shardMember()
	return l
}

// stoppedTimer returns a timer that has not been started.
func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// run is Run after registration.
func (l *loop) run(ctx context.Context) error {
	defer l.cancel()
	l.adoptOwnRecord()
	if l.leaders != nil {
		l.background(func() { l.leaders.deliver(l.base) }) // until shutdown cancels base
	}
	bg, stopBackground := context.WithCancel(context.Background())
	var bgWG sync.WaitGroup
	l.watch.Start(bg)
	l.pub.Start(bg)
	bgWG.Add(1)
	go func() {
		defer bgWG.Done()
		rootdata.KeepRegistered(bg, l.m.sess, l.m.memberPath(), l.m.instance, l.m.cfg.ACL, l.m.log, l.fail)
	}()
	err := l.serve(ctx)
	l.shutdown(stopBackground, &bgWG, errors.Is(err, ErrDuplicateMember))
	return err
}

// serve handles events until ctx is done, a duplicate member shows up, or
// the session is closed.
func (l *loop) serve(ctx context.Context) error {
	tick := time.NewTicker(l.collectEvery())
	defer tick.Stop()
	defer l.wake.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-l.fatal:
			return err
		case <-l.m.sess.Ended(): // closed, or credentials refused by every server
			return fmt.Errorf("partition: %w", l.m.sess.EndErr())
		case u := <-l.updates:
			l.apply(u)
		case ev := <-l.events:
			l.handle(ev)
		case <-l.m.changed:
			l.steps.Dirty, l.recordChanged, l.steps.Due = true, true, true // the record carries the list's digest
		case <-tick.C:
			l.collect(time.Now())
			l.checkPublished()
		case <-l.pub.Idle(): // a record write ended: the next may go (publish)
		case <-l.wake.C:
			l.wakeAt, l.steps.Due = time.Time{}, true // armed for a step then (wakeIn)
			l.steps.Stale = l.steps.Stale || l.handoffs.Settling()
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

// step runs the loop's stages once, in order: notice what time and the
// session changed (loopnotice.go), decide the assignment (loopassign.go),
// reconcile the runners with it (reconcile.go), publish the record
// (looppublish.go). Deciding and reconciling run only when the state
// changed, at most once per step gap (pace: member.Steps); notice and
// publish run every step.
func (l *loop) step() {
	l.notice()
	defer l.publish()
	if !l.pace() {
		return
	}
	l.steps.Acted = false
	l.decide()
	l.reconcileStale()
	l.steps.NoteCost(time.Since(l.steps.LastStep()), l.steps.Acted)
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
	l.steps.Dirty, l.steps.ViewNew = true, true
	old := l.view.Operator
	if u.Members != nil && !maps.Equal(u.Members, l.view.Members) {
		// After the startup wait a join, a stop or a crash is acted on at
		// once; during it, steps would only find the wait longer.
		l.steps.Urgent = l.startup.MembersChanged(time.Now()) || l.steps.Urgent
	}
	l.view.Apply(u)
	if u.Rec != nil && len(l.orphaned) > 0 && u.Rec.Session == l.view.Members[u.Member] {
		for s := range u.Rec.Leading { // led by a live member now: no failover of ours to time
			delete(l.orphaned, s)
		}
	}
	l.noticeOwnRecord(u)
	switch {
	case u.Operator != nil:
		l.steps.Urgent = true
		l.noticeOperator(old.OperatorState, u.Operator.OperatorState)
		clear(l.clearing)
	case u.Members != nil:
		l.collect(time.Now())
	case u.Rec == nil:
		delete(l.absentSince, u.Member)
		delete(l.collecting, u.Member)
	}
}

// handle records a runner's report.
func (l *loop) handle(ev shard.Event) {
	r, id := ev.Runner, ev.Runner.ID()
	switch ev.Kind {
	case shard.Started:
		l.leading.Start(id, ev.Token, time.Now())
		l.grace.Resume(id)
		l.grace.Release(id)
		delete(l.unavail, id) // led after all: available
		delete(l.unseated, id)
		if since, ok := l.orphaned[id]; ok {
			l.m.met.failovers.Observe(time.Since(since).Seconds())
			delete(l.orphaned, id)
		}
	case shard.Stopped:
		l.leading.End(id, time.Now())
		l.grace.Resume(id)
		l.reserveLost(id, ev.Reason)
	case shard.Suspended:
		if l.leading.Leads(id) {
			l.grace.Suspend(id, time.Now())
		}
	case shard.Unseated:
		l.markUnseated(id, time.Now())
	case shard.Deferred:
		if b := l.book(r); b.handoff {
			b.handoff = false
			l.handoffs.Ended(id, time.Now(), true) // try again once settled again
			l.m.met.deferred.Inc()
			l.nextHandoffs()
		}
		l.steps.Stale = true // a withdrawal dropped: handed off once settled
	case shard.Finished:
		b := l.book(r)
		delete(l.books, r)
		if ev.Reason != nil { // its candidate's znode is left to the session (member stopping)
			l.unwithdrawn.add(ev.Reason)
		}
		l.leading.End(id, time.Now()) // a suspended leadership the record claims, withdrawn
		l.grace.Resume(id)
		l.handoffs.Forget(id)
		if l.runners[id] == r {
			delete(l.runners, id)
		}
		if b.handoff {
			l.handoffs.Ended(id, time.Now(), false)
			l.m.met.handoffs.Observe(time.Since(b.stopAt).Seconds())
			l.nextHandoffs()
		}
		if b.removed {
			l.deleteShard(id)
		}
		l.m.runnerGone(id) // layout.go
		l.steps.Stale = true
		l.steps.Due = l.steps.Due || l.targets[id] == l.m.cfg.MemberID // ours still: started again
	}
}

// deleteShard deletes a removed shard's election znode; it stays while
// other members' candidates are still in it (the last one out deletes it).
func (l *loop) deleteShard(s string) {
	l.background(func() {
		err := l.m.sess.Delete(l.base, l.m.shardPath(s), -1)
		if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			l.m.log.Warn().Err(err).Str("shard", s).Msg("delete removed shard")
		}
	})
}

// shutdown leaves gracefully: it records what we lead (reserved for our
// restart grace), unregisters so others start taking over, then resigns
// every shard (all at once: a stop is not throttled) and waits for every
// goroutine of the run. A refused member (another live session holds the
// member id) leaves the record and the member znode, the other's, alone.
func (l *loop) shutdown(stopBackground context.CancelFunc, bg *sync.WaitGroup, refused bool) {
	stopBackground()
	bg.Wait()
	l.watch.Wait()
	l.pub.Wait()
	// The farewell (final record, member znode) and the runners' stops go
	// at once: with ZooKeeper out of reach each waits out its bound, and
	// the stop takes the longest of them, not their sum.
	var farewell sync.WaitGroup
	var recErr, unregErr error
	if !refused {
		rec := l.finalRecord()
		farewell.Go(func() {
			ctx, cancel := context.WithTimeout(l.base, l.m.cfg.HandoffTimeout)
			defer cancel()
			recErr = l.pub.Write(ctx, rec)
			unregErr = l.unregister(ctx)
		})
	}
	for _, r := range l.runners {
		if r.StopReason() == nil {
			r.Stop(ErrStopping)
		}
	}
	for len(l.runners) > 0 {
		l.handle(<-l.events)
	}
	farewell.Wait()
	l.reportStop(recErr, unregErr)
	l.cancel()
	l.workers.Wait()
	l.m.pool.Close()
}

// unregister deletes the member znode if our session owns it. A
// connection loss (or any other retryable answer) is retried, backing off,
// until the delete is done, the session is gone or HandoffTimeout passes:
// a member znode left behind by a live session makes the others count
// this member as live and leave its shards unled for as long as the
// session lives (the caller may keep it for other elections).
func (l *loop) unregister(ctx context.Context) error {
	p := l.m.memberPath()
	err := retry.Do(ctx, func() (bool, error) {
		ok, st, err := l.m.sess.Exists(ctx, p)
		if err == nil && ok && st.EphemeralOwner == l.m.sess.ID() {
			err = l.m.sess.Delete(ctx, p, st.Version)
		}
		return !recipe.Retryable(err) || l.m.sessionClosed(), err
	})
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("unregister member: %w", err)
	}
	return nil
}

// reportStop logs what a stop could not finish in one line, not one a
// shard: the final record (recErr), the member znode (unregErr) and the
// candidates not withdrawn. Nothing is logged when all went well.
func (l *loop) reportStop(recErr, unregErr error) {
	u := &l.unwithdrawn
	if u.n == 0 && recErr == nil && unregErr == nil {
		return
	}
	var errs []error
	if recErr != nil {
		errs = append(errs, errors.New("final member record not written: "+recErr.Error()))
	}
	if unregErr != nil {
		errs = append(errs, unregErr)
	}
	if u.n > 0 {
		errs = append(errs, u.first)
	}
	l.m.log.Warn().Int("shards_not_withdrawn", u.n).Err(errors.Join(errs...)).
		Msg("stopped without finishing its farewell (ZooKeeper unreachable?); ZooKeeper deletes the session's znodes when the session ends")
}
