package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// This file measures what bounds a large fleet's safety for the ensemble:
// the sessions each member's elections run on, the largest closeSession
// transaction one of them would make the servers write and read back, and
// whether every server still restarts and loads its database.

// boundSteps is the shard count from which the shards scenario measures
// sessions, closeSession sizes and server restarts (and starts the servers
// with boundHeap).
const (
	boundSteps = 20000
	boundHeap  = "1g"
)

// sessionLoad measures the sessions of every member of f and the largest
// closeSession one of them would write, from ZooKeeper's own list of each
// session's ephemerals (the dump four-letter word of the quorum leader).
func (e *env) sessionLoad(ctx context.Context, f *fleet, n int) ([]Result, error) {
	owned, err := e.ephemerals(ctx)
	if err != nil {
		return nil, err
	}
	perMember, most := map[string]int{}, 0
	var largest, largestN int
	var largestOf string
	for id, m := range f.managers() {
		loads := m.Sessions()
		perMember[id] = len(loads)
		most = max(most, len(loads))
		for _, l := range loads {
			if b := closeSessionBytes(owned[l.SessionID]); b > largest {
				largest, largestN, largestOf = b, len(owned[l.SessionID]), id
			}
		}
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range perMember {
			if !yield(id) {
				return
			}
		}
	})
	var each []string
	for _, id := range ids {
		each = append(each, fmt.Sprintf("%s %d", id, perMember[id]))
	}
	return []Result{
		{Scenario: fmt.Sprintf("shards/sessions per member at %d", n), Value: float64(most), Unit: "sessions",
			Note: fmt.Sprintf("%s; at most %d ephemerals a session (MaxShardsPerSession's default)",
				strings.Join(each, ", "), partition.DefaultMaxShardsPerSession)},
		{Scenario: fmt.Sprintf("shards/largest closeSession at %d", n), Value: float64(largest), Unit: "bytes",
			Floor: fmt.Sprintf("jute.maxbuffer %d; servers read back at most %d", partition.DefaultJuteMaxBuffer, 2*partition.DefaultJuteMaxBuffer),
			Note:  fmt.Sprintf("one of %s's sessions, %d ephemerals (from the leader's dump: 84 + the sum of 4 + path)", largestOf, largestN)},
	}, nil
}

// closeSessionBytes is the size of the closeSession transaction of a
// session owning the ephemeral znodes at paths.
func closeSessionBytes(paths []string) int {
	if len(paths) == 0 {
		return 0
	}
	n := partition.CloseSessionBytes(0, 0)
	for _, p := range paths {
		n += 4 + len(p)
	}
	return n
}

// ephemerals reads the quorum leader's dump: every session's ephemeral
// znode paths.
func (e *env) ephemerals(ctx context.Context) (map[int64][]string, error) {
	leader, err := e.cluster.QuorumLeader(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: quorum leader: %w", err)
	}
	owned, err := e.cluster.Ephemerals(ctx, leader)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return owned, nil
}

// restartServers restarts every server in turn (each loads its database
// from disk and rejoins the quorum before the next goes down), then waits
// for the fleet to be balanced again, and reports the time both took.
func (e *env) restartServers(ctx context.Context, f *fleet, n int, after string) (Result, error) {
	start := time.Now()
	for i := range e.cluster.Size() {
		if err := e.cluster.Restart(ctx, i); err != nil {
			return Result{}, fmt.Errorf("bench: after %s: server %d did not load its database and serve: %w", after, i, err)
		}
	}
	restarted := time.Since(start)
	done, err := f.awaitConverged(ctx, convergeLimit(n))
	if err != nil {
		return Result{}, fmt.Errorf("bench: balanced after the servers restarted: %w", err)
	}
	return Result{Scenario: fmt.Sprintf("shards/servers restart after %s (%d shards)", after, n), Value: msf(restarted), Unit: "ms",
		Note: fmt.Sprintf("each of %d servers restarted in turn, loaded its database and rejoined; every shard led and balanced %s later",
			e.cluster.Size(), done.Sub(start.Add(restarted)).Round(time.Millisecond))}, nil
}

// rollingRestarts reports whether the shards scenario restarts every
// server in turn at n shards: from boundSteps, on an ensemble of 3 or more
// (restarting a standalone server, or one of 2, stops the service).
func (e *env) rollingRestarts(n int) bool {
	return n >= boundSteps && e.cluster.Size() >= 3
}

// boundAt measures the sessions and the largest closeSession of a
// converged fleet, then restarts every server (rollingRestarts).
func (e *env) boundAt(ctx context.Context, f *fleet, n int, after string) ([]Result, error) {
	out, err := e.sessionLoad(ctx, f, n)
	if err != nil {
		return nil, err
	}
	if !e.rollingRestarts(n) {
		return out, nil
	}
	r, err := e.restartServers(ctx, f, n, after)
	if err != nil {
		return nil, err
	}
	return append(out, r), nil
}
