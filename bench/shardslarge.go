package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file holds the shards scenario's large-fleet steps (1,000,000
// shards, Config.LargeFleet): after the cold start and the memory
// readings, the member started through a proxy crashes and another joins,
// with no graceful stop, drain or second cold start, each of which would
// take as long again at that size. The join is capped by Config.StepLimit.

// largeFleetShards is the shard count above which the shards scenario runs
// the large-fleet steps whatever Config.LargeFleet says.
const largeFleetShards = 100000

// largeFleetSteps crashes f.proxied, a member of the cold start, times
// until its shards are led and balanced among the others (crashStep),
// then adds a member (joinStep, capped by the step limit), and restarts
// the servers for their snapshots (snapshotStep). It logs each row as it
// is measured. A step that fails ends the steps with a row saying why,
// not an error: the rows of an hour's run are kept. After a cold start
// that was not balanced by the step limit (unbalanced) only the snapshot
// step runs: a crash or a join of a fleet still starting measures nothing.
func (e *env) largeFleetSteps(ctx context.Context, f *fleet, n, members int, unbalanced bool) []Result {
	steps := []struct {
		name string
		run  func() ([]Result, error)
	}{
		{"crash", func() ([]Result, error) { return e.crashStep(ctx, f, n, members) }},
		{"join", func() ([]Result, error) { return e.joinStep(ctx, f, n, "joiner") }},
		{"snapshot", func() ([]Result, error) { return e.snapshotStep(ctx, f, n) }},
	}
	if unbalanced {
		steps = steps[2:]
	}
	var out []Result
	for _, s := range steps {
		res, err := s.run()
		if err != nil {
			res = []Result{{Scenario: fmt.Sprintf("shards/%s step failed (%d shards)", s.name, n), Note: err.Error()}}
		}
		e.logRows(res)
		out = append(out, res...)
		if err != nil {
			break // the next steps start from a balanced fleet
		}
	}
	return out
}

// crashStep crashes f.proxied and times until its shards are led and
// balanced among the other members.
func (e *env) crashStep(ctx context.Context, f *fleet, n, members int) ([]Result, error) {
	f.takeMoves()
	own := len(f.ledBy(f.proxied))
	sessions := f.sessionsOf(f.proxied)
	start := time.Now()
	f.crash(f.proxied)
	e.logf("bench: %s crashed (%d shards)", f.proxied, own)
	done, err := f.awaitConverged(ctx, convergeLimit(n))
	if err != nil {
		return nil, fmt.Errorf("bench: after %s crashed: %w", f.proxied, err)
	}
	return []Result{{Scenario: fmt.Sprintf("shards/led again after a crash (%d shards)", n), Value: msf(done.Sub(start)), Unit: "ms",
		Floor: fmt.Sprintf("session timeout %s", e.sessionTimeout),
		Note: fmt.Sprintf("%s of the cold start crashes (its connection silenced until its %d sessions expired); its %d shards led and balanced again among the other %d",
			f.proxied, sessions, own, members-1)}}, nil
}

// logRows logs rows as the table prints them, for a long run's progress.
func (e *env) logRows(rows []Result) {
	for _, r := range rows {
		e.logf("bench: %s: %s %s; %s; %s", r.Scenario, trimFloat(r.Value), r.Unit, r.Floor, r.Note)
	}
}

// joinStep adds member id to a balanced fleet f of n shards and waits,
// for at most the step limit, until it is balanced again. A join that is not balanced at the limit is
// reported so (the moves until then, and what the joiner leads), not as
// an error. The ideal is the joiner's share, n over the live members. It
// returns the moves' row and, when balanced, the time's.
func (e *env) joinStep(ctx context.Context, f *fleet, n int, id string) ([]Result, error) {
	limit := e.stepLimit
	if limit == 0 {
		limit = convergeLimit(n)
	}
	f.takeMoves() // forget the earlier steps'
	live := len(f.managers())
	ideal := n / (live + 1)
	start := time.Now()
	if err := f.add(ctx, id); err != nil {
		return nil, err
	}
	e.logf("bench: %s joins %d members", id, live)
	done, err := f.awaitConverged(ctx, limit)
	moves, _ := countMoves(f.takeMoves(), nil)
	row := Result{Scenario: fmt.Sprintf("shards/moves on join (%d shards)", n), Value: float64(moves), Unit: "shards",
		Floor: fmt.Sprintf("%d (shards/%d members)", ideal, live+1)}
	switch {
	case errors.Is(err, errNotBalanced):
		row.Note = fmt.Sprintf("member %d joins %d; not balanced after %s: it leads %d of its %d (%s)",
			live+1, live, limit, len(f.ledBy(id)), ideal, rate(moves, limit))
		return []Result{row}, nil
	case err != nil:
		return nil, err
	}
	took := done.Sub(start)
	row.Note = fmt.Sprintf("member %d joins %d; balanced again in %s (%s)", live+1, live, took.Round(time.Millisecond), rate(moves, took))
	return []Result{row,
		{Scenario: fmt.Sprintf("shards/balanced again after a join (%d shards)", n), Value: msf(took), Unit: "ms",
			Note: fmt.Sprintf("from the joiner's start until every shard is led and none leads more than its share; %d moves, %s",
				moves, rate(moves, took))}}, nil
}

// sessionsOf returns how many sessions member id's elections run on (0 if
// it is not in f).
func (f *fleet) sessionsOf(id string) int {
	f.mu.Lock()
	fm := f.members[id]
	f.mu.Unlock()
	if fm == nil {
		return 0
	}
	return len(fm.m.Sessions())
}
