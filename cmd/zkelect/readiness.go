package main

import (
	"context"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// managerReadiness decides /readyz: the member is ready once it is
// registered under <root>/members by this session and it leads its fair
// share of the shards (between floor and ceil of shards/live members), that
// is, once the first balance is done. Live members are counted as the
// Manager counts them (partition.LiveMembers: persistent znodes under
// members are not members). Readiness then stays latched: later rebalances
// do not make a running member unready.
type managerReadiness struct {
	sess    *recipe.Session
	mgr     *partition.Manager
	root    string
	member  string
	nShards int
	gauge   prometheus.Gauge

	ready atomic.Bool
}

// Ready implements readiness. It reads the member znodes while not yet
// ready and nothing afterwards; ctx bounds the reads.
func (r *managerReadiness) Ready(ctx context.Context) bool {
	if r.ready.Load() {
		return true
	}
	if !r.check(ctx) {
		return false
	}
	r.ready.Store(true)
	r.gauge.Set(1)
	return true
}

func (r *managerReadiness) check(ctx context.Context) bool {
	members, err := partition.LiveMembers(ctx, r.sess, r.root)
	if err != nil || members[r.member] != r.sess.ID() {
		return false
	}
	led := len(r.mgr.Leaderships())
	floor := r.nShards / len(members)
	ceil := (r.nShards + len(members) - 1) / len(members)
	return led >= floor && led <= ceil
}
