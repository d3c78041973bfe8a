package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/zkelect/zkelect/recipe"
)

// acquireLimit bounds the wait for any one failover in a trial.
const acquireLimit = 30 * time.Second

func (e *env) runFailover(ctx context.Context, cfg Config, rep *Report) error {
	f, err := e.floors(ctx, cfg)
	if err != nil {
		return err
	}
	resign, err := e.failoverResign(ctx, cfg.ResignTrials)
	if err != nil {
		return err
	}
	crash, err := e.failoverCrash(ctx, cfg.CrashTrials)
	if err != nil {
		return err
	}
	rep.Results = append(rep.Results,
		Result{Scenario: "failover/resign", Dist: &resign,
			Floor: fmt.Sprintf("delete→watch p50 %s", ms(f.notify.P50)),
			Note:  "leader resigns; time until the next Campaign returns"},
		Result{Scenario: "failover/crash", Dist: &crash,
			Floor: fmt.Sprintf("session timeout %s + delete→watch p50 %s", e.sessionTimeout, ms(f.notify.P50)),
			Note:  "leader's connection silenced (a crash); time until the next leads"},
	)
	return nil
}

// failoverResign measures the time from a leader's Resign to the next
// candidate's Campaign returning, over two candidates taking turns.
func (e *env) failoverResign(ctx context.Context, trials int) (Dist, error) {
	return e.failover(ctx, "/bench/failover-resign", false, trials, "after resign",
		func(cur acquisition) (func(), error) { return func() {}, cur.c.resign(ctx, cur.l) })
}

// failoverCrash measures the time from silencing the leader's connection
// (its proxy blackholed: to the servers, a crashed process) to the next
// candidate leading, which needs the silent session to expire.
func (e *env) failoverCrash(ctx context.Context, trials int) (Dist, error) {
	return e.failover(ctx, "/bench/failover-crash", true, trials, "after crash",
		func(cur acquisition) (func(), error) {
			cur.c.proxy.Blackhole()
			return cur.c.proxy.Heal, nil
		})
}

// failover runs trials of one failover scenario on an election of two
// candidates at path (behind proxies when proxied): each trial waits for
// both candidates, applies fault to the current leader, and times until
// the successor leads. fault returns how to undo it once the successor
// leads (or the wait failed).
func (e *env) failover(ctx context.Context, path string, proxied bool, trials int, what string,
	fault func(cur acquisition) (undo func(), err error)) (Dist, error) {
	el, err := e.newElection(ctx, path, 2, proxied)
	if err != nil {
		return Dist{}, err
	}
	defer el.close()
	samples := make([]time.Duration, 0, trials)
	for range trials {
		if err := e.awaitParticipants(ctx, el.all[0].sess, el.path, 2); err != nil {
			return Dist{}, err
		}
		cur, err := el.current(ctx)
		if err != nil {
			return Dist{}, err
		}
		start := time.Now()
		undo, err := fault(cur)
		if err != nil {
			return Dist{}, err
		}
		next, err := el.successor(ctx, cur.c, start, what)
		undo()
		if err != nil {
			return Dist{}, err
		}
		samples = append(samples, next.at.Sub(start))
	}
	return NewDist(samples), nil
}

// awaitParticipants waits until the election at path has n candidates, as
// seen through sess: the previous leader is back in line before a trial.
func (e *env) awaitParticipants(ctx context.Context, sess *recipe.Session, path string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, acquireLimit)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ps, err := recipe.Participants(ctx, sess, path)
		if err == nil && len(ps) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: waiting for %d candidates in %s (have %d, last error %v): %w",
				n, path, len(ps), err, ctx.Err())
		case <-tick.C:
		}
	}
}
