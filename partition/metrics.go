package partition

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/internal/registry"
)

// metrics are the manager's Prometheus collectors. Const labels root and
// member keep several managers apart on one registry; shard ids are never
// labels (their number is unbounded).
type metrics struct {
	shards      prometheus.Gauge
	led         prometheus.Gauge
	started     prometheus.Counter
	stopped     *prometheus.CounterVec // by reason
	passedOn    prometheus.Counter
	handoffs    prometheus.Histogram
	deferred    prometheus.Counter // balancing handoffs given back
	failovers   prometheus.Histogram
	assignments prometheus.Counter
	sessions    prometheus.Gauge
	weight      prometheus.Gauge     // this member's weight in the assignment
	assigned    prometheus.Gauge     // shards the assignment gives this member
	drained     prometheus.Gauge     // 1 while an operator drains this member
	frozen      prometheus.Gauge     // 1 while the root is frozen, as this member sees it
	refused     *prometheus.GaugeVec // znodes of the root over this member's bounds, by kind
	// publishLag: from a change of what this member leads to the record
	// write that shows it; recordFailures: record writes that failed.
	publishLag     prometheus.Histogram
	recordFailures prometheus.Counter
}

// newMetrics registers the collectors on reg; a nil reg keeps them
// unregistered (still usable). A collector already registered with the
// same labels (a second Manager for the same root and member) is reused.
func newMetrics(reg prometheus.Registerer, root, member string) *metrics {
	labels := prometheus.Labels{"root": root, "member": member}
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "zkelect", Subsystem: "partition", Name: name, Help: help, ConstLabels: labels}
	}
	m := &metrics{
		shards:   prometheus.NewGauge(prometheus.GaugeOpts(opts("shards", "Shards in this member's set (Config.Shards, or the last SetShards): what all members together should lead."))),
		led:      prometheus.NewGauge(prometheus.GaugeOpts(opts("shards_led", "Shards this member leads now."))),
		started:  prometheus.NewCounter(prometheus.CounterOpts(opts("leaderships_started_total", "Shard leaderships started (OnStartedLeading calls)."))),
		stopped:  prometheus.NewCounterVec(prometheus.CounterOpts(opts("leaderships_stopped_total", "Shard leaderships stopped, by reason.")), []string{"reason"}),
		passedOn: prometheus.NewCounter(prometheus.CounterOpts(opts("passed_on_total", "Shard elections won while assigned elsewhere and resigned at once."))),
		handoffs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "zkelect", Subsystem: "partition", Name: "handoff_seconds", ConstLabels: labels,
			Help:    "Time from asking a leadership to hand off to its znode being deleted, in seconds.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		deferred: prometheus.NewCounter(prometheus.CounterOpts(opts("handoffs_deferred_total",
			"Balancing handoffs given back with the shard still led here: the target's candidate did not wait in its election "+
				"within HandoffTimeout, or the assignment moved the shard again meanwhile. The shard is handed off once settled again."))),
		failovers: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "zkelect", Subsystem: "partition", Name: "failover_seconds", ConstLabels: labels,
			Help: "Time from this member seeing a shard's leader gone (its member no longer live) to leading " +
				"the shard itself, in seconds: the part of a failover after the old leader's session ended or it left.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		assignments: prometheus.NewCounter(prometheus.CounterOpts(opts("assignments_total", "Assignments computed from the observed state."))),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts(opts("sessions",
			"ZooKeeper sessions this member's elections run on (at most MaxShardsPerSession elections each)."))),
		weight:   prometheus.NewGauge(prometheus.GaugeOpts(opts("weight", "This member's weight in the assignment (its own, or an operator's)."))),
		assigned: prometheus.NewGauge(prometheus.GaugeOpts(opts("shards_assigned", "Shards the latest assignment gives this member: its share."))),
		drained:  prometheus.NewGauge(prometheus.GaugeOpts(opts("drained", "1 while an operator drains this member, else 0."))),
		frozen:   prometheus.NewGauge(prometheus.GaugeOpts(opts("frozen", "1 while the root is frozen (maintenance mode), as this member sees it, else 0."))),
		refused: prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("root_refused",
			"Znodes of the root over this member's bounds (partition/README.md, Bounds), not read: live members not counted (kind=members), "+
				"member records not watched (kind=records). 0 when within them.")), []string{"kind"}),
		publishLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "zkelect", Subsystem: "partition", Name: "record_publish_lag_seconds", ConstLabels: labels,
			Help: "Time from a change of what this member leads (a leadership started or ended) to the write of its " +
				"record (<root>/owners/<member>) that shows it, in seconds: how long routers and dashboards reading " +
				"the records lag this member's elections.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
		recordFailures: prometheus.NewCounter(prometheus.CounterOpts(opts("record_write_failures_total",
			"Writes of this member's record that failed (each is retried until the record is written)."))),
	}
	if reg == nil {
		return m
	}
	m.shards = registry.Register(reg, m.shards)
	m.led = registry.Register(reg, m.led)
	m.started = registry.Register(reg, m.started)
	m.stopped = registry.Register(reg, m.stopped)
	m.passedOn = registry.Register(reg, m.passedOn)
	m.handoffs = registry.Register(reg, m.handoffs)
	m.deferred = registry.Register(reg, m.deferred)
	m.failovers = registry.Register(reg, m.failovers)
	m.assignments = registry.Register(reg, m.assignments)
	m.sessions = registry.Register(reg, m.sessions)
	m.weight = registry.Register(reg, m.weight)
	m.assigned = registry.Register(reg, m.assigned)
	m.drained = registry.Register(reg, m.drained)
	m.frozen = registry.Register(reg, m.frozen)
	m.refused = registry.Register(reg, m.refused)
	m.publishLag = registry.Register(reg, m.publishLag)
	m.recordFailures = registry.Register(reg, m.recordFailures)
	for _, r := range stopReasons { // at 0 from the start, for increase() and rate()
		m.stopped.WithLabelValues(r)
	}
	return m
}

// stopReasons are the values of reasonLabel.
var stopReasons = []string{"handoff", "withdrawn", "removed", "stopping", "lost"}

// setRefused sets the count of the root's znodes of kind ("members",
// "records") over this member's bounds.
func (m *metrics) setRefused(kind string, count int) {
	m.refused.WithLabelValues(kind).Set(float64(count))
}

// reasonLabel maps a stop reason to a bounded label value.
func reasonLabel(reason error) string {
	switch {
	case errors.Is(reason, ErrHandoff):
		return "handoff"
	case errors.Is(reason, ErrWithdrawn):
		return "withdrawn"
	case errors.Is(reason, ErrShardRemoved):
		return "removed"
	case errors.Is(reason, ErrStopping):
		return "stopping"
	default:
		return "lost"
	}
}
