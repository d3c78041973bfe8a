package partition_test

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestCallbackWritesThroughZooKeeperGuard: an OnStartedLeading callback
// reaches its leadership's znode and version with recipe.LeadershipFrom
// and writes through zxidfence's ZooKeeper guard, partition/README.md's example;
// Manager.Leadership returns the same leadership.
func TestCallbackWritesThroughZooKeeperGuard(t *testing.T) {
	root, shards := newRoot(t), partition.Range(0, 4)
	sess := connect(t, sessionTimeout)
	guard, err := zxidfence.NewZooKeeper(sess.Conn())
	if err != nil {
		t.Fatal(err)
	}
	targets := strings.Replace(root, "/partition-test/", "/guard-targets-", 1) // a top-level znode
	if _, err := sess.Conn().Create(targets, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	written := map[string]string{} // shard → the znode its leader wrote with
	var failures []string
	tr := newTracker()
	m := startMemberOn(t, sess, root, "a", shards, tr, func(c *partition.Config) {
		c.OnStartedLeading = func(ctx context.Context, shard string, token zxidfence.Token) {
			lead, ok := recipe.LeadershipFrom(ctx)
			mu.Lock()
			defer mu.Unlock()
			if !ok || lead.Token() != token {
				failures = append(failures, fmt.Sprintf("shard %s: LeadershipFrom = %v, %v", shard, lead, ok))
				return
			}
			err := guard.Write(ctx, path.Join(targets, shard), zxidfence.LeaderOf(lead, 0), []byte("state of "+shard))
			if err != nil {
				failures = append(failures, fmt.Sprintf("shard %s: guarded write: %v", shard, err))
				return
			}
			written[shard] = lead.Znode()
		}
	})
	waitFor(t, 20*time.Second, "every shard written through the guard", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(written)+len(failures) == len(shards), fmt.Sprint(written, failures)
	})
	mu.Lock()
	defer mu.Unlock()
	for _, f := range failures {
		t.Error(f)
	}
	for shard, znode := range written {
		lead, ok := m.m.Leadership(shard)
		if !ok || lead.Znode() != znode || !strings.HasPrefix(znode, electionOf(t, m.sess, root, shard)+"/") {
			t.Errorf("shard %s: Manager.Leadership = %v, %v; the callback wrote with znode %s", shard, lead, ok, znode)
		}
	}
}
