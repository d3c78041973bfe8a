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
	updates := make(chan rootdata.Update, 64)
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
		runners: map[string]*shard.Runner{}, books: map[*shard.Runner]*runnerBook{},
		core: member.NewCore[*shard.Seat](member.Config{
			Me: m.cfg.MemberID, RestartGrace: m.cfg.RestartGrace, StartupSettle: m.cfg.StartupSettle, Started: time.Now(),
		}),
		wake:       stoppedTimer(),
		otherLists: map[string]string{},
		pub:        m.newPublisher(),
		watch:      rootdata.NewWatcher(m.sess, m.root, updates, m.log).Within(m.bounds, m.cfg.MemberID, m.met.setRefused),
		leaders:    leaders,
		base:       base,
		cancel:     cancel,
	}
	l.view.Expect(len(m.currentShards())) // the view's index is made that large at once (a join reads every record)
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
			l.core.Steps.Dirty, l.recordChanged, l.core.Steps.Due = true, true, true // the record carries the list's digest
		case <-tick.C:
			l.carryOutPlan(l.collect(time.Now()))
			l.checkPublished()
		case <-l.pub.Idle(): // a record write ended: the next may go (publish)
		case <-l.wake.C:
			l.wakeAt, l.core.Steps.Due = time.Time{}, true // armed for a step then (wakeIn)
			l.core.Steps.Stale = l.core.Steps.Stale || l.core.Handoffs.Settling()
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

// step runs the loop's stages once, in order: feed the core what the
// sessions changed (notice, loopnotice.go), take the core's plan
// (member.Core.Step: what time changed, the pacing), decide the
// assignment (member.Core.Decide, fed by loopassign.go), reconcile the
// runners with it when the core says (member.Core.ReconcileDue: they lag
// it, the startup wait is over; member.Core.Reconcile, fed by
// reconcile.go), publish the record (records.go). Every stage returns the
// core's plan, and carryOutPlan (loopplan.go) carries each out. Deciding
// and reconciling run only when the plan says (the state changed, at most
// once per step gap); notice and publish run every step.
func (l *loop) step() {
	l.carryOutPlan(l.notice())
	plan := l.core.Step(l.facts(time.Now()))
	l.carryOutPlan(plan)
	defer l.publish()
	if !plan.Decide {
		return
	}
	l.core.Steps.Acted = false
	l.carryOutPlan(l.decide())
	due := l.core.ReconcileDue(l.startupFacts(time.Now()))
	l.carryOutPlan(due)
	if due.Reconcile && l.selfLive() {
		l.carryOutPlan(l.reconcile())
		// The shards dealt to others are created by their candidates; one
		// assigned here later finds its znode made, or makes it the slow way.
		l.newShards = nil
	}
	l.core.Steps.NoteCost(time.Since(l.core.Steps.LastStep()), l.core.Steps.Acted)
}

// fail reports an error that ends Run.
func (l *loop) fail(err error) {
	select {
	case l.fatal <- err:
	default:
	}
}

// apply merges a watcher's update into the view.
func (l *loop) apply(u rootdata.Update) {
	l.core.Steps.Dirty, l.core.Steps.ViewNew = true, true
	old := l.view.Operator
	if u.Members != nil && !maps.Equal(u.Members, l.view.Members) {
		// After the startup wait a join, a stop or a crash is acted on at
		// once; during it, steps would only find the wait longer.
		l.core.Steps.Urgent = l.core.Startup.MembersChanged(time.Now()) || l.core.Steps.Urgent
	}
	l.view.Apply(u)
	if u.Rec != nil && u.Rec.Session == l.view.Members[u.Member] {
		l.core.LedElsewhere(u.Rec.Leading) // led by a live member now: no failover of ours to time
	}
	l.noticeOwnRecord(u)
	switch {
	case u.Operator != nil:
		l.core.Steps.Urgent = true
		l.noticeOperator(old.OperatorState, u.Operator.OperatorState)
		l.core.Assign.OperatorChanged()
	case u.Members != nil:
		l.carryOutPlan(l.collect(time.Now()))
	case u.Rec == nil:
		l.core.Records.Forget(u.Member)
	}
}

// handle feeds a runner's report to the core (member.Core.Report) and
// carries out what it returns.
func (l *loop) handle(ev shard.Event) {
	r, id := ev.Runner, ev.Runner.ID()
	b := l.books[r] // nil: nothing asked of the runner
	mev := member.Event{
		Shard: id, Kind: eventKinds[ev.Kind], Token: ev.Token,
		Expired: ev.Kind == shard.Stopped && errors.Is(ev.Reason, recipe.ErrSessionExpired),
	}
	if b != nil {
		mev.Handoff, mev.AskedAt, mev.Removed = b.handoff, b.stopAt, b.removed
	}
	p := l.core.Report(mev, l.facts(time.Now()))
	if ev.Kind == shard.Finished {
		delete(l.books, r)
		if ev.Reason != nil { // its candidate's znode is left to the session (member stopping)
			l.unwithdrawn.add(ev.Reason)
		}
		if l.runners[id] == r {
			delete(l.runners, id)
		}
		l.m.runnerGone(id) // layout.go
	}
	if p.HandoffDeferred { // only of a runner asked for a handoff: b is set
		b.handoff = false
	}
	l.carryOutPlan(p)
}

// eventKinds translates the runners' event kinds into the core's.
var eventKinds = [...]member.EventKind{
	shard.Started: member.RunnerStarted, shard.Stopped: member.RunnerStopped,
	shard.Suspended: member.RunnerSuspended, shard.Unseated: member.RunnerUnseated,
	shard.Deferred: member.RunnerDeferred, shard.Finished: member.RunnerFinished,
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
