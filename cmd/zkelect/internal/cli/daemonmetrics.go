package cli

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// newDaemonRegistry returns the shards daemon's own registry (never the
// global one) with the Go and process collectors and the daemon's metrics;
// the session and the partition manager add theirs.
func newDaemonRegistry(member string) (*prometheus.Registry, *daemonMetrics) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, newDaemonMetrics(reg, member)
}

// daemonMetrics are the shards daemon's own collectors, beside the ones the
// session and the partition manager register.
type daemonMetrics struct {
	childrenRunning prometheus.Gauge
	childExits      prometheus.Counter
	ready           prometheus.Gauge
}

// newDaemonMetrics registers the daemon's collectors on reg.
func newDaemonMetrics(reg prometheus.Registerer, member string) *daemonMetrics {
	m := &daemonMetrics{
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
			Help: "1 once the member is registered and past its first balance, else 0.",
		}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "zkelect_build_info",
		Help:        "Always 1; labels name the zkelect version and the member id.",
		ConstLabels: prometheus.Labels{"version": buildVersion(), "member": member},
	})
	info.Set(1)
	reg.MustRegister(m.childrenRunning, m.childExits, m.ready, info)
	return m
}

// setReady sets zkelect_daemon_ready to /readyz's verdict.
func (m *daemonMetrics) setReady(ok bool) {
	v := 0.0
	if ok {
		v = 1
	}
	m.ready.Set(v)
}
