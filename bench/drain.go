package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/zkelect/zkelect/partition/operator"
)

// drainStep drains member id of a converged fleet with the operator verb
// (its shards handed to the others, MaxConcurrentHandoffs at a time) and
// times until it leads nothing and every shard is led and balanced among
// the others; then undrains it and times until the fleet is balanced over
// every member again (the members leading the most hand it a share, like
// a join).
func (e *env) drainStep(ctx context.Context, fleet *fleet, n int, id string) ([]Result, error) {
	sess, err := e.session(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	op, err := operator.New(sess, fleet.root, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: operator: %w", err)
	}
	fleet.takeMoves()
	own := fleet.ledBy(id)
	start := time.Now()
	fleet.setDrained(id, true)
	if _, err := op.Drain(ctx, id, "bench"); err != nil {
		return nil, fmt.Errorf("bench: drain %s: %w", id, err)
	}
	done, err := fleet.awaitConverged(ctx, convergeLimit(n))
	if err != nil {
		return nil, err
	}
	drainTime := done.Sub(start)
	drained, extra := countMoves(fleet.takeMoves(), own)
	start = time.Now()
	fleet.setDrained(id, false)
	if _, err := op.Undrain(ctx, id); err != nil {
		return nil, fmt.Errorf("bench: undrain %s: %w", id, err)
	}
	if done, err = fleet.awaitConverged(ctx, convergeLimit(n)); err != nil {
		return nil, err
	}
	undrainTime := done.Sub(start)
	back, _ := countMoves(fleet.takeMoves(), nil)
	return []Result{
		{Scenario: fmt.Sprintf("shards/drain of a member (%d shards)", n), Value: msf(drainTime), Unit: "ms",
			Floor: fmt.Sprintf("%d moves (its shards)", len(own)),
			Note: fmt.Sprintf("operator Drain(%s): %d moves (%d of other members' shards), %s; until it leads nothing and the others are balanced",
				id, drained, extra, rate(drained, drainTime))},
		{Scenario: fmt.Sprintf("shards/undrain of a member (%d shards)", n), Value: msf(undrainTime), Unit: "ms",
			Note: fmt.Sprintf("operator Undrain(%s): %d moves, %s; until balanced over every member again", id, back, rate(back, undrainTime))},
	}, nil
}

// rate describes moves handed off in d as handoffs a second.
func rate(moves int, d time.Duration) string {
	if d <= 0 {
		return "no time"
	}
	return fmt.Sprintf("%.0f handoffs/s", float64(moves)/d.Seconds())
}
