package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/zkelect/zkelect/recipe"
)

// metricValue returns the value of the sample of family name whose labels
// include all of labels, or -1 when there is none.
func metricValue(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				switch {
				case m.Gauge != nil:
					return m.GetGauge().GetValue()
				case m.Counter != nil:
					return m.GetCounter().GetValue()
				case m.Histogram != nil:
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return -1
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

func TestMetricsFollowLeadership(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	path := electionPath(t)
	s := session(t, zkc.ConnectString(), recipe.WithMetrics(reg))
	c := candidate(t, s, path)
	l := lead(t, c)
	election := map[string]string{"election": path}
	if v := metricValue(t, reg, "zkelect_is_leader", election); v != 1 {
		t.Fatalf("is_leader while leading: %v", v)
	}
	if v := metricValue(t, reg, "zkelect_time_to_leadership_seconds", election); v != 1 {
		t.Fatalf("time-to-leadership samples: %v", v)
	}
	if err := l.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := metricValue(t, reg, "zkelect_is_leader", election); v != 0 {
		t.Fatalf("is_leader after resign: %v", v)
	}
	if v := metricValue(t, reg, "zkelect_leadership_lost_total", map[string]string{"election": path, "reason": "resigned"}); v != 1 {
		t.Fatalf("losses by resign: %v", v)
	}
	if v := metricValue(t, reg, "zkelect_session_state", map[string]string{"state": "connected"}); v != 1 {
		t.Fatalf("session state connected: %v", v)
	}
	if v := metricValue(t, reg, "zkelect_zookeeper_request_duration_seconds", map[string]string{"op": "create", "result": "ok"}); v < 1 {
		t.Fatalf("create latency samples: %v", v)
	}
	// A registry shared by two sessions is fine.
	session(t, zkc.ConnectString(), recipe.WithMetrics(reg))
}

// TestMetricsLabelAggregatesElections runs leaders of three elections under
// one metrics label: they share one series per metric, and
// zkelect_is_leader counts their leaderships.
func TestMetricsLabelAggregatesElections(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	s := session(t, zkc.ConnectString(), recipe.WithMetrics(reg))
	base, label := electionPath(t), "shards/*"
	var leads []*recipe.Leadership
	for _, shard := range []string{"a", "b", "c"} {
		leads = append(leads, lead(t, candidate(t, s, base+"/"+shard, recipe.WithMetricsLabel(label))))
	}
	byLabel := map[string]string{"election": label}
	if v := metricValue(t, reg, "zkelect_is_leader", byLabel); v != 3 {
		t.Fatalf("is_leader with 3 leaderships under one label: %v, want 3", v)
	}
	if err := leads[0].Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := metricValue(t, reg, "zkelect_is_leader", byLabel); v != 2 {
		t.Fatalf("is_leader after one resign: %v, want 2", v)
	}
	if v := metricValue(t, reg, "zkelect_leadership_acquired_total", byLabel); v != 3 {
		t.Fatalf("acquired: %v, want 3", v)
	}
	if n := seriesOf(t, reg, "zkelect_is_leader"); n != 1 {
		t.Fatalf("%d zkelect_is_leader series, want 1 (the shared label)", n)
	}
	if _, err := recipe.NewCandidate(s, base+"/d", recipe.WithMetricsLabel("")); !errors.Is(err, recipe.ErrInvalidOption) {
		t.Fatalf("empty label: %v, want ErrInvalidOption", err)
	}
}

// seriesOf counts the series of family name.
func seriesOf(t *testing.T, reg prometheus.Gatherer, name string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

// TestSessionLeaseAndTokenMetrics: each session exports how long its lease
// still holds and how late ZooKeeper answers it (label session_id), and a
// single election's leader exports its token's epoch and counter, absent
// once it resigns.
func TestSessionLeaseAndTokenMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	path := electionPath(t)
	s := session(t, zkc.ConnectString(), recipe.WithMetrics(reg))
	id := map[string]string{"session_id": fmt.Sprintf("0x%x", s.ID())}
	if v := metricValue(t, reg, "zkelect_session_lease_remaining_seconds", id); v <= 0 || v > s.Timeout().Seconds() {
		t.Errorf("lease remaining %v, want in (0, %v]", v, s.Timeout().Seconds())
	}
	if v := metricValue(t, reg, "zkelect_session_answer_lag_seconds", id); v < 0 || v >= s.Timeout().Seconds() {
		t.Errorf("answer lag %v, want in [0, %v)", v, s.Timeout().Seconds())
	}
	l := lead(t, candidate(t, s, path))
	election := map[string]string{"election": path}
	if v := metricValue(t, reg, "zkelect_leader_token_epoch", election); v != float64(l.Token().Epoch()) {
		t.Errorf("token epoch gauge %v, want %d", v, l.Token().Epoch())
	}
	if v := metricValue(t, reg, "zkelect_leader_token_counter", election); v != float64(l.Token().Counter()) {
		t.Errorf("token counter gauge %v, want %d", v, l.Token().Counter())
	}
	if err := l.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := metricValue(t, reg, "zkelect_leader_token_counter", election); v != -1 {
		t.Errorf("token counter gauge %v after resigning, want none", v)
	}
	s.Close()
	if v := metricValue(t, reg, "zkelect_session_lease_remaining_seconds", id); v != -1 {
		t.Errorf("lease remaining %v after Close, want no series", v)
	}
}
