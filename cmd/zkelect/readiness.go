package main

import (
	"path"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// managerReadiness decides /readyz: the member is ready once its member
// znode exists under <root>/members with this session as owner and it leads
// its fair share of the shards (between floor and ceil of shards/members),
// that is, once the first balance is done. Readiness then stays latched:
// later rebalances do not make a running member unready.
type managerReadiness struct {
	sess    *recipe.Session
	mgr     *partition.Manager
	root    string
	member  string
	nShards int
	gauge   prometheus.Gauge

	ready atomic.Bool
}

// Ready implements readiness. It reads two znodes while not yet ready and
// nothing afterwards.
func (r *managerReadiness) Ready() bool {
	if r.ready.Load() {
		return true
	}
	if !r.check() {
		return false
	}
	r.ready.Store(true)
	r.gauge.Set(1)
	return true
}

func (r *managerReadiness) check() bool {
	conn := r.sess.Conn()
	dir := path.Join(r.root, "members")
	ok, st, err := conn.Exists(path.Join(dir, r.member))
	if err != nil || !ok || st.EphemeralOwner != r.sess.ID() {
		return false
	}
	members, _, err := conn.Children(dir)
	if err != nil || len(members) == 0 {
		return false
	}
	led := len(r.mgr.Leaderships())
	floor := r.nShards / len(members)
	ceil := (r.nShards + len(members) - 1) / len(members)
	return led >= floor && led <= ceil
}
