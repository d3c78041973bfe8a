package recipe

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkelect/zkelect/internal/registry"
)

// leaseGauges exports, per live session of a Registerer (label session_id,
// hex, as the logs name it), how long its local lease still holds and how
// late ZooKeeper answers it: the two signs of authority getting fragile
// that the field's observability checklists ask for (lease age, renewal
// latency). Sessions sharing a Registerer share one leaseGauges.
type leaseGauges struct {
	remaining, lag *prometheus.Desc

	mu       sync.Mutex
	sessions map[*Session]struct{}
}

func newLeaseGauges(r prometheus.Registerer) *leaseGauges {
	g := &leaseGauges{
		remaining: prometheus.NewDesc("zkelect_session_lease_remaining_seconds",
			"How long the session's local lease still holds: the server cannot have expired the session before then (send time of the last answered request + session timeout - now; 0 once out).",
			[]string{"session_id"}, nil),
		lag: prometheus.NewDesc("zkelect_session_answer_lag_seconds",
			"How long ago the request ZooKeeper answered last was sent (pings included): about a round trip when prompt, up to a third of the session timeout when idle; leadership ends as it nears the session timeout.",
			[]string{"session_id"}, nil),
		sessions: map[*Session]struct{}{},
	}
	return registry.Register(r, g)
}

// Describe implements prometheus.Collector.
func (g *leaseGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.remaining
	ch <- g.lag
}

// Collect implements prometheus.Collector: one sample of each per session
// that has a session id now.
func (g *leaseGauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for s := range g.sessions {
		id := s.ID()
		if id == 0 {
			continue
		}
		label := fmt.Sprintf("0x%x", id)
		ch <- prometheus.MustNewConstMetric(g.remaining, prometheus.GaugeValue, s.LeaseRemaining().Seconds(), label)
		ch <- prometheus.MustNewConstMetric(g.lag, prometheus.GaugeValue, s.AnswerLag().Seconds(), label)
	}
}

func (g *leaseGauges) track(s *Session) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sessions[s] = struct{}{}
}

func (g *leaseGauges) untrack(s *Session) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.sessions, s)
}

// LeaseRemaining returns how long the session's local lease still holds:
// ZooKeeper cannot have expired the session before the latest instant its
// quorum leader is known to have heard of it (from the connect response
// and the session's syncs; pings and a follower's reads do not count, see
// the package documentation) + the negotiated session timeout, measured on
// the monotonic clock. It is 0 once that instant has passed, and before
// anything vouched for the session. Leaderships end a margin before it
// runs out (see TolerateSuspend).
func (s *Session) LeaseRemaining() time.Duration {
	d, ok := s.leaseDeadline(s.ID(), 0)
	if !ok {
		return 0
	}
	return max(time.Until(d), 0)
}
