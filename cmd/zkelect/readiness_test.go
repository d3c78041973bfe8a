package main

import (
	"context"
	"errors"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
)

// TestReadinessIgnoresPersistentZnodesUnderMembers: a persistent znode
// under <root>/members is no member, for /readyz as for the Manager. It
// once counted as one: a lone member leading all 6 shards waited forever
// for its "fair share" of 3.
func TestReadinessIgnoresPersistentZnodesUnderMembers(t *testing.T) {
	s, root, shards := testSession(t), testPath(t), partition.Range(0, 6)
	for _, p := range []string{path.Dir(root), root, root + "/members", root + "/members/ghost"} {
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	mgr, err := partition.NewManager(s, root, partition.Config{MemberID: "m1", Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	r := &managerReadiness{sess: s, mgr: mgr, root: root, member: "m1", nShards: len(shards),
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ready"})}
	eventually(t, 20*time.Second, "the lone member leading every shard to be ready", func() bool {
		return len(mgr.Leaderships()) == len(shards) && r.Ready(t.Context())
	})
}
