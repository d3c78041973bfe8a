package routing_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
)

// TestRouterOverZooKeeperObservesItsViewLag: a router given a registry
// observes zkelect_routing_view_lag_seconds once per leader change a
// notification caused (member a stopping hands its shards to b), and a
// second client on the same registry shares the histogram.
func TestRouterOverZooKeeperObservesItsViewLag(t *testing.T) {
	root, shards := testRoot(t), partition.Range(0, 8)
	a := runMember(t, root, "a", shards)
	runMember(t, root, "b", shards)
	reg := prometheus.NewRegistry()
	c, err := routing.New(routing.Config{Source: routing.ZooKeeper(connect(t), root), Shards: shards, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := routing.New(routing.Config{Source: routing.ZooKeeper(connect(t), root), Shards: shards, Metrics: reg}); err != nil {
		t.Fatalf("a second client on the same registry: %v", err)
	}
	runClient(t, c)
	moved := 0
	eventually(t, 30*time.Second, "every shard routed, a leading some", func() (bool, string) {
		moved = 0
		for _, s := range shards {
			r, err := c.Leader(s)
			if err != nil {
				return false, s + ": " + err.Error()
			}
			if r.Member == "a" {
				moved++
			}
		}
		return moved > 0, fmt.Sprintf("a leads %d", moved)
	})
	before := lagCount(t, reg)
	a.stop()
	eventually(t, 30*time.Second, "every shard routed to b after a stopped", func() (bool, string) { return allRoutedTo(c, shards, "b") })
	if got := lagCount(t, reg) - before; got < uint64(moved) {
		t.Errorf("zkelect_routing_view_lag_seconds observed %d changes while a's %d shards moved to b", got, moved)
	}
}

// lagCount returns the histogram's sample count.
func lagCount(t *testing.T, reg *prometheus.Registry) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "zkelect_routing_view_lag_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatal("zkelect_routing_view_lag_seconds is not registered")
	return 0
}
