package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/zkelect/zkelect/partition/operator"
)

// This file is the shards scenario's drain step: an operator drains one
// member of a balanced fleet (zkelect drain), and the step times until the
// member leads nothing and the others are balanced; then it undrains it
// and times until the fleet is balanced over every member again.

// drainStep drains member id of f, a fleet of n shards, and undrains it.
func (e *env) drainStep(ctx context.Context, f *fleet, n int, id string) ([]Result, error) {
	sess, err := e.session(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	op, err := operator.New(sess, f.root, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: operator: %w", err)
	}
	f.takeMoves()
	own := len(f.ledBy(id))
	start := time.Now()
	e.logf("bench: draining %s (%d shards)", id, own)
	if _, err := op.Drain(ctx, id, "bench"); err != nil {
		return nil, fmt.Errorf("bench: drain %s: %w", id, err)
	}
	done, err := f.awaitBalanced(ctx, convergeLimit(n), id)
	if err != nil {
		return nil, fmt.Errorf("bench: after draining %s: %w", id, err)
	}
	drained := done.Sub(start)
	moves, _ := countMoves(f.takeMoves(), nil)
	start = time.Now()
	if _, err := op.Undrain(ctx, id); err != nil {
		return nil, fmt.Errorf("bench: undrain %s: %w", id, err)
	}
	if done, err = f.awaitConverged(ctx, convergeLimit(n)); err != nil {
		return nil, fmt.Errorf("bench: after undraining %s: %w", id, err)
	}
	back, _ := countMoves(f.takeMoves(), nil)
	return []Result{
		{Scenario: fmt.Sprintf("shards/drained and balanced (%d shards)", n), Value: msf(drained), Unit: "ms",
			Floor: fmt.Sprintf("%d moves (its shards)", own),
			Note:  fmt.Sprintf("an operator drains %s (Operator.Drain); %d moves until it leads nothing and the others are balanced", id, moves)},
		{Scenario: fmt.Sprintf("shards/undrained and balanced (%d shards)", n), Value: msf(done.Sub(start)), Unit: "ms",
			Note: fmt.Sprintf("Operator.Undrain of %s; %d moves until balanced over every member again", id, back)},
	}, nil
}
