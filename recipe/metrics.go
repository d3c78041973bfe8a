package recipe

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkelect/zkelect/internal/registry"
	"github.com/zkelect/zkelect/zxidfence"
)

// metrics holds the recipe's collectors. A nil *metrics records nothing, so
// callers never check whether WithMetrics was given.
type metrics struct {
	isLeader     *prometheus.GaugeVec     // election
	acquired     *prometheus.CounterVec   // election
	lost         *prometheus.CounterVec   // election, reason
	timeToLead   *prometheus.HistogramVec // election
	sessionState *prometheus.GaugeVec     // state
	expiries     prometheus.Counter
	requests     *prometheus.HistogramVec // op, result
	tokenEpoch   *prometheus.GaugeVec     // election: single elections only
	tokenCounter *prometheus.GaugeVec     // election: single elections only
	leases       *leaseGauges
}

// sessionStates are the values of the state label of zkelect_session_state.
var sessionStates = []string{"connected", "disconnected", "expired", "closed"}

func newMetrics(r prometheus.Registerer) *metrics {
	if r == nil {
		return nil
	}
	m := &metrics{
		isLeader: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zkelect_is_leader",
			Help: "Leaderships this process holds in the election: 1 or 0 per candidate; candidates sharing a label (a partition manager's shards) add up.",
		}, []string{"election"}),
		acquired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zkelect_leadership_acquired_total",
			Help: "Leaderships taken, per election.",
		}, []string{"election"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zkelect_leadership_lost_total",
			Help: "Leaderships ended, per election and final reason (resigned, closed, session_expired, suspended, znode_deleted): one that ended while its session may have expired is counted once the candidate knows whether it did.",
		}, []string{"election", "reason"}),
		timeToLead: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkelect_time_to_leadership_seconds",
			Help:    "Time from a candidate entering the election (or re-entering after a loss) to leading.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"election"}),
		sessionState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zkelect_session_state",
			Help: "1 for the current state of the ZooKeeper session (connected, disconnected, expired, closed), 0 for the others.",
		}, []string{"state"}),
		expiries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zkelect_session_expiries_total",
			Help: "ZooKeeper sessions that expired (or were forgotten by the ensemble).",
		}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zkelect_zookeeper_request_duration_seconds",
			Help:    "Latency of the recipe's ZooKeeper requests by operation and result (ok, error).",
			Buckets: prometheus.ExponentialBuckets(0.0002, 4, 10),
		}, []string{"op", "result"}),
	}
	m.tokenEpoch = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zkelect_leader_token_epoch",
		Help: "Epoch (high 32 bits of the zxid) of the fencing token this process leads a single election with; absent while not leading. Elections sharing a metrics label (a partition's shards) are left out.",
	}, []string{"election"})
	m.tokenCounter = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zkelect_leader_token_counter",
		Help: "Counter (low 32 bits of the zxid) of the fencing token this process leads a single election with; absent while not leading.",
	}, []string{"election"})
	m.tokenEpoch = registry.Register(r, m.tokenEpoch)
	m.tokenCounter = registry.Register(r, m.tokenCounter)
	m.leases = newLeaseGauges(r)
	m.isLeader = registry.Register(r, m.isLeader)
	m.acquired = registry.Register(r, m.acquired)
	m.lost = registry.Register(r, m.lost)
	m.timeToLead = registry.Register(r, m.timeToLead)
	m.sessionState = registry.Register(r, m.sessionState)
	m.expiries = registry.Register(r, m.expiries)
	m.requests = registry.Register(r, m.requests)
	return m
}

func (m *metrics) setSessionState(state string) {
	if m == nil {
		return
	}
	for _, s := range sessionStates {
		v := 0.0
		if s == state {
			v = 1
		}
		m.sessionState.WithLabelValues(s).Set(v)
	}
}

func (m *metrics) sessionExpired() {
	if m != nil {
		m.expiries.Inc()
	}
}

func (m *metrics) request(op string, start time.Time, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.requests.WithLabelValues(op, result).Observe(time.Since(start).Seconds())
}

func (m *metrics) leading(election string, since time.Time) {
	if m == nil {
		return
	}
	m.isLeader.WithLabelValues(election).Inc()
	m.acquired.WithLabelValues(election).Inc()
	if !since.IsZero() {
		m.timeToLead.WithLabelValues(election).Observe(time.Since(since).Seconds())
	}
}

// trackSession adds (or, with on false, removes) s to the lease gauges.
func (m *metrics) trackSession(s *Session, on bool) {
	if m == nil {
		return
	}
	if on {
		m.leases.track(s)
	} else {
		m.leases.untrack(s)
	}
}

// token sets (or, with ok false, removes) the token gauges of a single
// election.
func (m *metrics) token(election string, t zxidfence.Token, ok bool) {
	if m == nil {
		return
	}
	if !ok {
		m.tokenEpoch.DeleteLabelValues(election)
		m.tokenCounter.DeleteLabelValues(election)
		return
	}
	m.tokenEpoch.WithLabelValues(election).Set(float64(t.Epoch()))
	m.tokenCounter.WithLabelValues(election).Set(float64(t.Counter()))
}

// notLeading counts a leadership of election that ended; its loss is
// counted by lost once its reason is final.
func (m *metrics) notLeading(election string) {
	if m != nil {
		m.isLeader.WithLabelValues(election).Dec()
	}
}

// lostFor counts a leadership of election lost for reason, its final one
// (Leadership.Reason): one that ended while its session may have expired
// is counted once the candidate learned whether it did.
func (m *metrics) lostFor(election string, reason error) {
	if m != nil {
		m.lost.WithLabelValues(election, reasonLabel(reason)).Inc()
	}
}

// lossReasons are the reason label values of zkelect_leadership_lost_total
// that a candidate's series start with, at 0 (reasonLabel's "other" only
// appears if it ever happens).
var lossReasons = []string{"resigned", "closed", "session_expired", "suspended", "znode_deleted"}

// election makes election's counters exist at 0 (acquisitions, and losses
// by every reason), so that increase() and rate() see their first rise.
func (m *metrics) election(election string) {
	if m == nil {
		return
	}
	m.acquired.WithLabelValues(election)
	for _, r := range lossReasons {
		m.lost.WithLabelValues(election, r)
	}
}

// reasonLabel names a loss reason for metrics and logs.
func reasonLabel(err error) string {
	switch {
	case errors.Is(err, ErrResigned):
		return "resigned"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.Is(err, ErrSessionExpired):
		return "session_expired"
	case errors.Is(err, ErrSuspended):
		return "suspended"
	case errors.Is(err, ErrZnodeDeleted):
		return "znode_deleted"
	}
	return "other"
}
