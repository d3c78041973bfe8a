package main

import (
	"context"
	"errors"
	"path"
	"strings"
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
	r := &managerReadiness{sess: s, mgr: mgr, root: root, member: "m1",
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ready"})}
	eventually(t, 20*time.Second, "the lone member leading every shard to be ready", func() bool {
		return len(mgr.Leaderships()) == len(shards) && r.Ready(t.Context())
	})
}

// TestRootStatusNamesAPersistentZnode: status of a partition root says a
// shard is stuck behind a persistent znode (an operator's lock), instead of
// showing the znode's data as its leader.
func TestRootStatusNamesAPersistentZnode(t *testing.T) {
	s, root := testSession(t), testPath(t)
	for _, p := range []string{path.Dir(root), root, root + "/shards", root + "/shards/0"} {
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	lock, err := s.Conn().Create(root+"/shards/0/lock-", []byte("operator"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	st, err := rootStatusOf(t.Context(), s, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Shards) != 1 || st.Shards[0].Leader != "" || st.Shards[0].Stuck != lock {
		t.Errorf("root status = %+v, want shard 0 without a leader, stuck behind %s", st.Shards, lock)
	}
	var out strings.Builder
	if err := st.write(&out, "text"); err != nil {
		t.Fatal(err)
	}
	if want := "(none: stuck behind persistent " + lock + ")"; !strings.Contains(out.String(), want) {
		t.Errorf("status text lacks %q:\n%s", want, out.String())
	}
}
