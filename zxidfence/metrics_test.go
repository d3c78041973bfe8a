package zxidfence_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/zxidfence"
)

func TestMetricsCountDecisionsAndExportTokenHalves(t *testing.T) {
	ctx := testContext(t)
	reg := prometheus.NewRegistry()
	m, err := zxidfence.NewMetrics(reg, "shard-1")
	if err != nil {
		t.Fatal(err)
	}
	g := zxidfence.NewMemory(zxidfence.WithMetrics(m))
	high := zxidfence.NewToken(0xfffffffe, 0xfffffff0) // far above 2^53
	_ = g.Do(ctx, "shard-1", zxidfence.At(high), nil)
	_ = g.Do(ctx, "shard-1", zxidfence.At(high), nil)
	_ = g.Do(ctx, "shard-1", zxidfence.At(5), nil)
	_ = g.Do(ctx, "shard-1", zxidfence.At(0), nil)
	_ = g.Do(ctx, "unnamed-a", zxidfence.At(1), nil)
	_ = g.Do(ctx, "unnamed-b", zxidfence.At(1), nil)
	if _, err := g.AcceptGeneration(ctx, "shard-1", 1, "test"); err != nil {
		t.Fatal(err)
	}
	_ = g.Do(ctx, "shard-1", zxidfence.Fence{Generation: 1, Token: 7}, nil)

	want := map[string]float64{
		`zkelect_fence_accepted_total{guard="memory",resource=""}`:                          2,
		`zkelect_fence_accepted_total{guard="memory",resource="shard-1"}`:                   3,
		`zkelect_fence_generation_changes_total{guard="memory",resource="shard-1"}`:         1,
		`zkelect_fence_highest_counter{guard="memory",resource="shard-1"}`:                  7,
		`zkelect_fence_highest_epoch{guard="memory",resource="shard-1"}`:                    0,
		`zkelect_fence_highest_generation{guard="memory",resource="shard-1"}`:               1,
		`zkelect_fence_rejected_total{guard="memory",reason="no_token",resource="shard-1"}`: 1,
		`zkelect_fence_rejected_total{guard="memory",reason="stale",resource="shard-1"}`:    1,
	}
	// Every reason's rejection counter exists, at 0 until it counts, for
	// each resource that saw a decision (an alert's increase() needs it).
	for _, res := range []string{"", "shard-1"} {
		for _, reason := range []string{"stale", "no_token", "unknown_generation", "not_leader", "malformed"} {
			k := `zkelect_fence_rejected_total{guard="memory",reason="` + reason + `",resource="` + res + `"}`
			if _, ok := want[k]; !ok {
				want[k] = 0
			}
		}
	}
	got := gather(t, reg)
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v; want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got series %v; want exactly %v", got, want)
	}
}

// gather returns every sample of reg as "name{label="value",...}" -> value,
// labels in the registry's (sorted) order.
func gather(t testing.TB, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

func TestMetricsHighestTokenIsExactAboveFloatPrecision(t *testing.T) {
	ctx := testContext(t)
	reg := prometheus.NewRegistry()
	m, _ := zxidfence.NewMetrics(reg, "k")
	g := zxidfence.NewMemory(zxidfence.WithMetrics(m))
	high := zxidfence.NewToken(0xfffffffe, 0xfffffff1)
	if err := g.Do(ctx, "k", zxidfence.At(high), nil); err != nil {
		t.Fatal(err)
	}
	got := gather(t, reg)
	epoch := got[`zkelect_fence_highest_epoch{guard="memory",resource="k"}`]
	counter := got[`zkelect_fence_highest_counter{guard="memory",resource="k"}`]
	if got := zxidfence.NewToken(uint32(epoch), uint32(counter)); got != high {
		t.Fatalf("token rebuilt from gauges = %v; want %v", got, high)
	}
}

func TestNewMetricsNilAndDuplicate(t *testing.T) {
	m, err := zxidfence.NewMetrics(nil)
	if m != nil || err != nil {
		t.Fatalf("NewMetrics(nil) = %v, %v; want nil, nil", m, err)
	}
	// A nil *Metrics counts nothing and does not panic.
	if err := zxidfence.NewMemory(zxidfence.WithMetrics(m)).Do(testContext(t), "k", zxidfence.At(1), nil); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if _, err := zxidfence.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := zxidfence.NewMetrics(reg); err == nil {
		t.Fatal("a second NewMetrics on one registry succeeded")
	}
}
