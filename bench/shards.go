package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// convergeLimit bounds each wait for a fleet of n shards to converge: 3
// minutes, or 10 ms a shard for more than 18,000 (a bound on a loaded
// machine, not a measurement).
func convergeLimit(n int) time.Duration {
	return max(3*time.Minute, time.Duration(n)*10*time.Millisecond)
}

func (e *env) runShards(ctx context.Context, cfg Config, rep *Report) error {
	f, err := e.floors(ctx, cfg)
	if err != nil {
		return err
	}
	counts := slices.Sorted(slices.Values(cfg.Shards))
	for i, n := range counts {
		res, err := e.shardScenario(ctx, n, cfg, i == 0, true, f)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res...)
	}
	return nil
}

// shardScenario starts cfg.Members partition members together over n
// fresh shards and measures the time until every shard is led and
// balanced; on request also the moves when a member joins and leaves, the
// crash and drain steps (joinLeave), and the memory per shard of the
// members and of the servers (memoryRows). Above largeFleetShards, or with
// cfg.LargeFleet, the steps after the cold start are largeFleetSteps.
func (e *env) shardScenario(ctx context.Context, n int, cfg Config, moves, memory bool, fl *floors) ([]Result, error) {
	members := cfg.Members
	large := cfg.LargeFleet || n > largeFleetShards
	if large && members < 2 {
		return nil, fmt.Errorf("bench: the large-fleet steps crash one of the members: want at least 2, not %d", members)
	}
	fleet := e.newFleet(fmt.Sprintf("/bench/shards-%d-%d", n, time.Now().UnixNano()), n)
	fleet.expected = members // as a fleet that knows its size sets it
	if large {
		fleet.proxied = fmt.Sprintf("m%d", members-1) // the member the crash step silences
	}
	mem0 := heapNow() // after the fleet's own bookkeeping, sized for n shards
	defer fleet.closeWithin(ctx, convergeLimit(n))
	packets0, err := e.packetsReceived(ctx)
	if err != nil {
		return nil, err
	}
	e.logf("bench: cold start of %d shards over %d members", n, members)
	limit := convergeLimit(n)
	if large && e.stepLimit > 0 {
		limit = e.stepLimit // the rows measured by then are still reported
	}
	start, cold, err := fleet.coldStart(ctx, members, limit)
	unbalanced := large && errors.Is(err, errNotBalanced)
	if err != nil && !unbalanced {
		return nil, err
	}
	e.logf("bench: cold start: %s", coldOutcome(fleet, cold, limit, unbalanced))
	packets1, err := e.packetsReceived(ctx)
	if err != nil {
		return nil, err
	}
	allLed := fleet.firstAllLed().Sub(start)
	creates, err := fleet.creates()
	if err != nil {
		return nil, err
	}
	// The floor: one ephemeral sequential create per shard, as fast as one
	// session makes them; no election of n shards can do with less. It is
	// measured again right after the cold start, on the same servers as
	// warm as the cold start left them, and the faster of the two counts.
	after, err := e.rawThroughput(ctx, cfg.RawCreates, cfg.InFlight)
	if err != nil {
		return nil, err
	}
	best := max(fl.throughput, after)
	floor := time.Duration(float64(n) / best * float64(time.Second))
	note := fmt.Sprintf("%.2fx the floor (the faster of %.0f creates/s before the scenario and %.0f/s right after it); %d members start together (in parallel), ExpectedMembers %d; until every shard is led (after %s) and none leads more than its share; %d candidate creates",
		cold.Seconds()/floor.Seconds(), fl.throughput, after, members, members, allLed.Round(time.Millisecond), creates)
	if unbalanced { // cold is 0: no time to report
		note = fmt.Sprintf("%s (--step-limit); %d members start together, ExpectedMembers %d; %d candidate creates; the floor is %s",
			coldOutcome(fleet, cold, limit, true), members, members, creates, floor.Round(time.Millisecond))
	}
	out := []Result{{
		Scenario: fmt.Sprintf("shards/cold start %d", n), Value: msf(cold), Unit: "ms",
		Floor: fmt.Sprintf("%d creates at %.0f/s = %s", n, best, floor.Round(time.Millisecond)), Note: note,
	}}
	wire, err := e.wireCost(ctx, fleet, n, packets1-packets0)
	if err != nil {
		return nil, err
	}
	out = append(out, wire...)
	if memory && n >= boundSteps {
		var res []Result
		var err error
		if large { // no rolling restart at that size
			res, err = e.sessionLoad(ctx, fleet, n)
		} else {
			res, err = e.boundAt(ctx, fleet, n, "a cold start")
		}
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	if memory {
		res, err := e.memoryRows(ctx, n, members, mem0)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	if large {
		e.logRows(out)
		return append(out, e.largeFleetSteps(ctx, fleet, n, members, unbalanced)...), nil
	}
	if moves {
		res, err := e.joinLeave(ctx, fleet, n, members)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
	}
	settled, wait, err := e.coldStartSettled(ctx, n, members)
	if err != nil {
		return nil, err
	}
	out = append(out, Result{
		Scenario: fmt.Sprintf("shards/cold start %d, StartupSettle alone", n), Value: msf(settled), Unit: "ms",
		Floor: out[0].Floor,
		Note: fmt.Sprintf("%.2fx the floor; the same cold start on a fresh root without ExpectedMembers: each member waits for the membership to be still for StartupSettle (%s)",
			settled.Seconds()/floor.Seconds(), wait),
	})
	return out, nil
}

// coldOutcome describes how a cold start ended: balanced after took, or
// (unbalanced) not by limit, with how many shards were led then and by
// whom.
func coldOutcome(f *fleet, took, limit time.Duration, unbalanced bool) string {
	if unbalanced {
		return fmt.Sprintf("not balanced after %s: %d of %d shards led (%s)", limit, f.ledCount(), len(f.shards), f.loads())
	}
	return fmt.Sprintf("balanced after %s", took.Round(time.Millisecond))
}

// coldStartSettled is the cold start of members members over n fresh
// shards with the startup wait alone (no ExpectedMembers): the time until
// every shard is led and balanced, and the StartupSettle the members used.
func (e *env) coldStartSettled(ctx context.Context, n, members int) (took, wait time.Duration, err error) {
	fleet := e.newFleet(fmt.Sprintf("/bench/shards-settle-%d-%d", n, time.Now().UnixNano()), n)
	wait = fleet.settle()
	if wait == 0 {
		wait = partition.DefaultStartupSettle
	}
	defer fleet.closeWithin(ctx, convergeLimit(n))
	_, took, err = fleet.coldStart(ctx, members, convergeLimit(n))
	return took, wait, err
}

// joinLeave adds a member to a converged fleet and then removes it,
// counting the shards that change leader each time; then an operator
// drains a member (drainStep), and a member crashes.
func (e *env) joinLeave(ctx context.Context, fleet *fleet, n, members int) ([]Result, error) {
	join, err := e.joinStep(ctx, fleet, n, "joiner")
	if err != nil {
		return nil, err
	}
	own := fleet.ledBy("joiner")
	start := time.Now()
	if err := fleet.remove(ctx, "joiner"); err != nil {
		return nil, err
	}
	done, err := fleet.awaitConverged(ctx, convergeLimit(n))
	if err != nil {
		return nil, err
	}
	leave, extra := countMoves(fleet.takeMoves(), own)
	leaveTime := done.Sub(start)
	var drain []Result
	if members >= 2 { // Drain refuses the last member
		if drain, err = e.drainStep(ctx, fleet, n, "m0"); err != nil {
			return nil, err
		}
	}
	var restarts []Result
	if e.rollingRestarts(n) {
		r, err := e.restartServers(ctx, fleet, n, "a graceful stop")
		if err != nil {
			return nil, err
		}
		restarts = append(restarts, r)
	}
	crash, err := e.crashRecovery(ctx, fleet, n)
	if err != nil {
		return nil, err
	}
	if e.rollingRestarts(n) {
		r, err := e.restartServers(ctx, fleet, n, "a crash")
		if err != nil {
			return nil, err
		}
		restarts = append(restarts, r)
	}
	return append(append(join,
		Result{Scenario: fmt.Sprintf("shards/moves on leave (%d shards)", n), Value: float64(leave), Unit: "shards",
			Floor: fmt.Sprintf("%d (the leaver's shards)", len(own)),
			Note: fmt.Sprintf("it leaves gracefully; %d moves of other members' shards; balanced again in %s",
				extra, leaveTime.Round(time.Millisecond))},
		Result{Scenario: fmt.Sprintf("shards/led again after a graceful stop (%d shards)", n), Value: msf(leaveTime), Unit: "ms",
			Note: fmt.Sprintf("the leaver's %d shards led and balanced again", len(own))},
		crash), append(drain, restarts...)...), nil
}

// crashRecovery adds a member through a proxy, waits for balance, silences
// it (a crash as ZooKeeper sees it) and times until every shard is led and
// balanced among the others again.
func (e *env) crashRecovery(ctx context.Context, fleet *fleet, n int) (Result, error) {
	p, err := e.cluster.NewProxy()
	if err != nil {
		return Result{}, fmt.Errorf("bench: proxy: %w", err)
	}
	if err := fleet.addVia(ctx, "crasher", p); err != nil {
		_ = p.Close()
		return Result{}, err
	}
	if _, err := fleet.awaitConverged(ctx, convergeLimit(n)); err != nil {
		return Result{}, err
	}
	own := len(fleet.ledBy("crasher"))
	start := time.Now()
	fleet.crash("crasher")
	done, err := fleet.awaitConverged(ctx, convergeLimit(n))
	if err != nil {
		return Result{}, err
	}
	return Result{Scenario: fmt.Sprintf("shards/led again after a crash (%d shards)", n), Value: msf(done.Sub(start)), Unit: "ms",
		Floor: fmt.Sprintf("session timeout %s", e.sessionTimeout),
		Note:  fmt.Sprintf("the crashed member's %d shards led and balanced again (its connection silenced until its session expired)", own)}, nil
}

// memStats is a reading of the process's memory: the live heap after a
// full collection (bytes), the goroutines, and the stack memory in use
// (bytes).
type memStats struct {
	heap       uint64
	goroutines int
	stack      uint64
}

// heapNow reads memStats after two full collections.
func heapNow() memStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memStats{ms.HeapAlloc, runtime.NumGoroutine(), ms.StackInuse}
}

// memoryRows reports the members' heap, goroutine stacks and goroutines
// per shard since mem0, and the ensemble's own memory (ensembleMemory).
func (e *env) memoryRows(ctx context.Context, n, members int, mem0 memStats) ([]Result, error) {
	m := heapNow()
	out := []Result{
		{Scenario: fmt.Sprintf("shards/heap per shard at %d", n), Value: (float64(m.heap) - float64(mem0.heap)) / float64(n),
			Unit: "bytes", Note: fmt.Sprintf("live heap after GC, %d members in this process (their sessions' fixed buffers included; the bench's own shard list and leader maps excluded)", members)},
		{Scenario: fmt.Sprintf("shards/goroutine stacks per shard at %d", n), Value: (float64(m.stack) - float64(mem0.stack)) / float64(n),
			Unit: "bytes", Note: "stack memory in use (not in the heap figure), whole process"},
		{Scenario: fmt.Sprintf("shards/goroutines per shard at %d", n), Value: float64(m.goroutines-mem0.goroutines) / float64(n),
			Unit: "goroutines", Note: "whole process, all members"},
	}
	ens, err := e.ensembleMemory(ctx, n)
	if err != nil {
		return nil, err
	}
	return append(out, ens...), nil
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
