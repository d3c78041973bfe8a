package partition

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the manager's Prometheus collectors. Const labels root and
// member keep several managers apart on one registry; shard ids are never
// labels (their number is unbounded).
type metrics struct {
	led         prometheus.Gauge
	started     prometheus.Counter
	stopped     *prometheus.CounterVec // by reason
	passedOn    prometheus.Counter
	handoffs    prometheus.Histogram
	assignments prometheus.Counter
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
		led:      prometheus.NewGauge(prometheus.GaugeOpts(opts("shards_led", "Shards this member leads now."))),
		started:  prometheus.NewCounter(prometheus.CounterOpts(opts("leaderships_started_total", "Shard leaderships started (OnStartedLeading calls)."))),
		stopped:  prometheus.NewCounterVec(prometheus.CounterOpts(opts("leaderships_stopped_total", "Shard leaderships stopped, by reason.")), []string{"reason"}),
		passedOn: prometheus.NewCounter(prometheus.CounterOpts(opts("passed_on_total", "Shard elections won while assigned elsewhere and resigned at once."))),
		handoffs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "zkelect", Subsystem: "partition", Name: "handoff_seconds", ConstLabels: labels,
			Help:    "Time from asking a leadership to hand off to its znode being deleted, in seconds.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		assignments: prometheus.NewCounter(prometheus.CounterOpts(opts("assignments_total", "Assignments computed from the observed state."))),
	}
	if reg == nil {
		return m
	}
	m.led = registerCollector(reg, m.led)
	m.started = registerCollector(reg, m.started)
	m.stopped = registerCollector(reg, m.stopped)
	m.passedOn = registerCollector(reg, m.passedOn)
	m.handoffs = registerCollector(reg, m.handoffs)
	m.assignments = registerCollector(reg, m.assignments)
	return m
}

// registerCollector registers c, or returns the collector already registered in
// its place.
func registerCollector[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

// reasonLabel maps a stop reason to a bounded label value.
func reasonLabel(reason error) string {
	switch {
	case errors.Is(reason, ErrHandoff):
		return "handoff"
	case errors.Is(reason, ErrShardRemoved):
		return "removed"
	case errors.Is(reason, ErrStopping):
		return "stopping"
	default:
		return "lost"
	}
}
