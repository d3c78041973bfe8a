package partition_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestShardElectionsShareOneMetricsSeries leads 40 shards on a session
// that keeps metrics: the recipe's per-election metrics carry one election
// label for all shards ("<root>/shards/*"), so a daemon with 10,000 shards
// exports a handful of series, not tens of thousands; zkelect_is_leader
// counts the shards led.
func TestShardElectionsShareOneMetricsSeries(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(sessionTimeout), recipe.WithMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 40)
	mb := startMemberOn(t, sess, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{mb}, 30*time.Second)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "zkelect_is_leader" {
			continue
		}
		var got []string
		for _, m := range mf.GetMetric() {
			got = append(got, fmt.Sprintf("%s=%v", m.GetLabel()[0].GetValue(), m.GetGauge().GetValue()))
		}
		if want := fmt.Sprintf("%s/shards/*=%d", root, len(shards)); len(got) != 1 || got[0] != want {
			t.Fatalf("zkelect_is_leader series %v, want just %s", got, want)
		}
		return
	}
	t.Fatal("no zkelect_is_leader series")
}

// TestFailoverSecondsCountsTakeovers stops one of two members: the other
// takes its shards over, and each takeover is observed in
// zkelect_partition_failover_seconds.
func TestFailoverSecondsCountsTakeovers(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 12)
	a := startMember(t, root, "a", shards, tr, noGrace, func(c *partition.Config) { c.Metrics = reg })
	b := startMember(t, root, "b", shards, tr, noGrace)
	waitBalanced(t, shards, []*member{a, b}, 30*time.Second)
	bLed := len(b.m.Leaderships())
	b.stop(t)
	waitBalanced(t, shards, []*member{a}, 30*time.Second)
	// The loop observes a takeover when it handles the runner's report,
	// a moment after Leaderships() shows it. A shard a wins before it has
	// seen b leave (a's connection dropped meanwhile, on a loaded machine)
	// is a handoff, not a failover, and is rightly not observed: at least
	// one of b's shards is, and never more than b led.
	tick, deadline := time.NewTicker(20*time.Millisecond), time.After(10*time.Second)
	defer tick.Stop()
	n := failoversObserved(t, reg)
	for n < bLed {
		select {
		case <-tick.C:
			n = failoversObserved(t, reg)
			continue
		case <-deadline:
		}
		break
	}
	t.Logf("%d failovers observed for the %d shards b led", n, bLed)
	if n < 1 || n > bLed {
		t.Errorf("%d failovers observed for the %d shards b led, want 1 to %d", n, bLed, bLed)
	}
}

// failoversObserved returns zkelect_partition_failover_seconds' count.
func failoversObserved(t *testing.T, reg prometheus.Gatherer) int {
	t.Helper()
	return int(gatherOne(t, reg, "zkelect_partition_failover_seconds").GetHistogram().GetSampleCount())
}

// gatherOne returns the first series of the metric family name in reg.
func gatherOne(t *testing.T, reg prometheus.Gatherer, name string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0]
		}
	}
	t.Fatalf("no %s series", name)
	return nil
}

// TestShardsGaugeFollowsTheShardSet: zkelect_partition_shards is the size
// of the member's shard set from NewManager on, and follows SetShards (the
// "no leader for a shard" alert compares it with the shards led).
func TestShardsGaugeFollowsTheShardSet(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(sessionTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	m, err := partition.NewManager(sess, newRoot(t), partition.Config{MemberID: "a", Shards: partition.Range(0, 12), Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	if n := gatherOne(t, reg, "zkelect_partition_shards").GetGauge().GetValue(); n != 12 {
		t.Fatalf("zkelect_partition_shards = %v after NewManager with 12 shards", n)
	}
	if err := m.SetShards(partition.Range(0, 20)); err != nil {
		t.Fatal(err)
	}
	if n := gatherOne(t, reg, "zkelect_partition_shards").GetGauge().GetValue(); n != 20 {
		t.Fatalf("zkelect_partition_shards = %v after SetShards of 20", n)
	}
}

// TestRecordPublishLagIsObserved: once a member's record shows the shards
// it leads, zkelect_partition_record_publish_lag_seconds has observed the
// writes that showed them, and zkelect_partition_record_write_failures_total
// is exported (zero: no write failed).
func TestRecordPublishLagIsObserved(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 6)
	a := startMember(t, root, "a", shards, tr, func(c *partition.Config) { c.Metrics = reg })
	waitBalanced(t, shards, []*member{a}, 30*time.Second)
	waitFor(t, 20*time.Second, "a's record to show its 6 shards", func() (bool, string) {
		rec := readRecord(t, a.sess, root, "a")
		return len(rec.Leading) == len(shards), fmt.Sprintf("record %+v", rec)
	})
	waitFor(t, 10*time.Second, "the publish lag to be observed", func() (bool, string) {
		n := gatherOne(t, reg, "zkelect_partition_record_publish_lag_seconds").GetHistogram().GetSampleCount()
		return n > 0, fmt.Sprintf("%d observations", n)
	})
	if n := gatherOne(t, reg, "zkelect_partition_record_write_failures_total").GetCounter().GetValue(); n != 0 {
		t.Errorf("record write failures %v on a healthy server, want 0", n)
	}
}
