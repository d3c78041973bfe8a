package zkelectd

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns the shards daemon's own registry (never the global
// one) with the Go and process collectors and the daemon's metrics
// (NewMetrics); the session and the partition manager add theirs.
func NewRegistry(member, version string) (*prometheus.Registry, *Metrics) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, NewMetrics(reg, member, version)
}

// Metrics are the shards daemon's own collectors, beside the ones the
// session and the partition manager register.
type Metrics struct {
	childrenRunning prometheus.Gauge
	childExits      prometheus.Counter
	ready           prometheus.Gauge
}

// NewMetrics registers the daemon's collectors on reg:
// zkelect_daemon_children_running, zkelect_daemon_child_exits_total,
// zkelect_daemon_ready and zkelect_build_info (labelled with version, the
// binary's, and member). It panics, as prometheus.MustRegister, when reg
// already holds them.
func NewMetrics(reg prometheus.Registerer, member, version string) *Metrics {
	m := &Metrics{
		childrenRunning: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zkelect_daemon_children_running",
			Help: "Shard children (--exec) running now.",
		}),
		childExits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zkelect_daemon_child_exits_total",
			Help: "Shard children (--exec) that exited or failed to start, for any reason.",
		}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zkelect_daemon_ready",
			Help: "1 while the member is ready (/readyz: registered, past its first balance, not stopping), else 0; evaluated every second.",
		}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "zkelect_build_info",
		Help:        "Always 1; labels name the zkelect version and the member id.",
		ConstLabels: prometheus.Labels{"version": version, "member": member},
	})
	info.Set(1)
	reg.MustRegister(m.childrenRunning, m.childExits, m.ready, info)
	return m
}

// SetReady sets zkelect_daemon_ready to a readiness verdict: /readyz's, and
// zkelecthttp.Shards.Run's every second (ShardsOptions.OnReadiness).
func (m *Metrics) SetReady(ok bool) {
	v := 0.0
	if ok {
		v = 1
	}
	m.ready.Set(v)
}
