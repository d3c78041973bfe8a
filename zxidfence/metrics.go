package zxidfence

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Guard kinds, the values of the "guard" label.
const (
	KindMemory    = "memory"
	KindSQL       = "sql"
	KindZooKeeper = "zookeeper"
	KindHTTP      = "http"
)

// Rejection reasons, the values of the "reason" label of
// zkelect_fence_rejected_total.
const (
	reasonStale      = "stale"
	reasonNoToken    = "no_token"
	reasonGeneration = "unknown_generation"
	reasonNotLeader  = "not_leader"
	reasonMalformed  = "malformed"
)

// Metrics counts guards' decisions in Prometheus. A nil *Metrics counts
// nothing. Create one per Registerer and share it between guards.
//
// Series (guard is memory, sql, zookeeper or http; resource is the key for
// the resources named to NewMetrics and "" for all others):
//
//	zkelect_fence_accepted_total{guard,resource}          writes admitted
//	zkelect_fence_rejected_total{guard,resource,reason}   writes refused: stale, no_token,
//	                                                      unknown_generation, not_leader, malformed
//	zkelect_fence_generation_changes_total{guard,resource} AcceptGeneration calls that moved a key
//	zkelect_fence_highest_epoch{guard,resource}           named resources only: epoch of the
//	zkelect_fence_highest_counter{guard,resource}         highest token this process accepted,
//	zkelect_fence_highest_generation{guard,resource}      its counter and its generation
//
// The accepted and rejected counters of a guard and resource exist, at 0
// for every reason, from its first decision on: an alert on
// increase(zkelect_fence_rejected_total[5m]) then sees the first rejection.
//
// A token is exported as epoch and counter because Prometheus samples are
// float64, exact only up to 2^53: the raw zxid is never a sample.
type Metrics struct {
	named map[string]bool

	accepted    *prometheus.CounterVec
	rejected    *prometheus.CounterVec
	generations *prometheus.CounterVec
	epoch       *prometheus.GaugeVec
	counter     *prometheus.GaugeVec
	generation  *prometheus.GaugeVec

	mu      sync.Mutex
	highest map[[2]string]Fence // (guard, resource) -> highest exported
	counted map[[2]string]bool  // (guard, resource) pairs whose counters exist
}

// NewMetrics registers the fencing series on reg and returns them. resources
// names the keys that get their own resource label value (and highest-token
// gauges); choose a bounded set, such as the shard ids. A nil reg returns a
// nil *Metrics, which counts nothing. Registration errors (such as a second
// NewMetrics on the same reg) are returned.
func NewMetrics(reg prometheus.Registerer, resources ...string) (*Metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &Metrics{
		named:       make(map[string]bool, len(resources)),
		highest:     make(map[[2]string]Fence),
		counted:     make(map[[2]string]bool),
		accepted:    counterVec("accepted_total", "Writes admitted by a fencing guard.", "guard", "resource"),
		rejected:    counterVec("rejected_total", "Writes refused by a fencing guard, by reason.", "guard", "resource", "reason"),
		generations: counterVec("generation_changes_total", "Resources moved to a new generation by an operator.", "guard", "resource"),
		epoch:       gaugeVec("highest_epoch", "Epoch (high 32 bits) of the highest token accepted."),
		counter:     gaugeVec("highest_counter", "Counter (low 32 bits) of the highest token accepted."),
		generation:  gaugeVec("highest_generation", "Generation of the highest fence accepted."),
	}
	for _, r := range resources {
		m.named[r] = true
	}
	for _, c := range []prometheus.Collector{m.accepted, m.rejected, m.generations, m.epoch, m.counter, m.generation} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("zxidfence: register metrics: %w", err)
		}
	}
	return m, nil
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "zkelect", Subsystem: "fence", Name: name, Help: help,
	}, labels)
}

func gaugeVec(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "zkelect", Subsystem: "fence", Name: name, Help: help,
	}, []string{"guard", "resource"})
}

func (m *Metrics) resource(key string) string {
	if m.named[key] {
		return key
	}
	return ""
}

// observe counts the outcome err of a write of fence f to key.
func (m *Metrics) observe(kind, key string, f Fence, err error) {
	if m == nil {
		return
	}
	res := m.resource(key)
	m.initCounters(kind, res)
	if err == nil {
		m.accepted.WithLabelValues(kind, res).Inc()
		m.raise(kind, res, f)
		return
	}
	if reason := rejectReason(err); reason != "" {
		m.rejected.WithLabelValues(kind, res, reason).Inc()
	}
}

// initCounters creates the accepted and rejected series of a guard and
// resource at zero, for every reason, when it first sees the pair: a
// counter that appears only at its first rejection, already at 1, shows
// no increase() to an alert on rejections.
func (m *Metrics) initCounters(kind, res string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{kind, res}
	if m.counted[k] {
		return
	}
	m.counted[k] = true
	m.accepted.WithLabelValues(kind, res)
	for _, r := range [...]string{reasonStale, reasonNoToken, reasonGeneration, reasonNotLeader, reasonMalformed} {
		m.rejected.WithLabelValues(kind, res, r)
	}
}

// generationChanged counts an AcceptGeneration that moved key to f.
func (m *Metrics) generationChanged(kind, key string, f Fence) {
	if m == nil {
		return
	}
	res := m.resource(key)
	m.generations.WithLabelValues(kind, res).Inc()
	m.raise(kind, res, f)
}

// raise moves the highest-fence gauges of a named resource up to f.
func (m *Metrics) raise(kind, res string, f Fence) {
	if res == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{kind, res}
	if cur, ok := m.highest[k]; ok && cur.Compare(f) >= 0 {
		return
	}
	m.highest[k] = f
	m.epoch.WithLabelValues(kind, res).Set(float64(f.Token.Epoch()))
	m.counter.WithLabelValues(kind, res).Set(float64(f.Token.Counter()))
	m.generation.WithLabelValues(kind, res).Set(float64(f.Generation))
}

// rejectReason classifies a guard error; "" means it is not a rejection (a
// transport or database failure, a cancelled context, the caller's fn).
func rejectReason(err error) string {
	switch {
	case errors.Is(err, ErrStaleToken):
		return reasonStale
	case errors.Is(err, ErrNoToken):
		return reasonNoToken
	case errors.Is(err, ErrUnknownGeneration):
		return reasonGeneration
	case errors.Is(err, ErrNotLeader):
		return reasonNotLeader
	case errors.Is(err, ErrInvalidToken), errors.Is(err, ErrOutOfRange), errors.Is(err, ErrInvalidKey):
		return reasonMalformed
	}
	return ""
}
