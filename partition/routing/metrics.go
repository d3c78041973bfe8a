package routing

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// clientMetrics are a client's metrics (Config.Metrics).
type clientMetrics struct {
	viewLag prometheus.Histogram
}

// newClientMetrics registers the metrics on reg, or takes those a client
// registered there before.
func newClientMetrics(reg prometheus.Registerer) (*clientMetrics, error) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "zkelect_routing_view_lag_seconds",
		Help: "Routing client over ZooKeeper: from the ZooKeeper notification of a change of a shard's leader reaching the router to its view showing the change (reads of created candidates and the view's steps included; the election-to-notification time is not).",
		// 0.5 ms to about 16 s.
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	})
	if err := reg.Register(h); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("routing: register zkelect_routing_view_lag_seconds: %w", err)
		}
		existing, ok := are.ExistingCollector.(prometheus.Histogram)
		if !ok {
			return nil, fmt.Errorf("routing: zkelect_routing_view_lag_seconds is registered as another kind: %w", err)
		}
		h = existing
	}
	return &clientMetrics{viewLag: h}, nil
}
