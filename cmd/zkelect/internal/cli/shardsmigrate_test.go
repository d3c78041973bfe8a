package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestShardsMigrateMovesAFlatRootToBuckets: two shards daemons of this
// release run a flat root (made by hand as a release before buckets made
// it); `zkelect shards migrate --wait` exits 0 once every shard's election
// is in its bucket, led by one of them, and <root>/shards is empty; a
// second run changes nothing.
func TestShardsMigrateMovesAFlatRootToBuckets(t *testing.T) {
	const n = 8
	root, s := testPath(t), testSession(t)
	for _, p := range []string{"/cmdtest", root, root + "/members", root + "/owners", root + "/shards"} {
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	startDaemonWith(t, root, "m1", n, nil)
	startDaemonWith(t, root, "m2", n, nil)
	eventually(t, 30*time.Second, "8 shards led, 4 by each daemon", func() bool { return balanced(owners(t, s, root), n, "m1", "m2") })
	if out := runVerbCLI(t, root, "migrate", "--wait"); !strings.Contains(out, "moved the root's shard elections to buckets") {
		t.Errorf("migrate --wait printed %q", out)
	}
	if kids, _, err := s.Conn().Children(root + "/shards"); err != nil || len(kids) != 0 {
		t.Errorf("<root>/shards after migrate --wait: %v (%v), want empty", kids, err)
	}
	eventually(t, 30*time.Second, "every shard led in its bucket", func() bool {
		o := owners(t, s, root)
		for _, sh := range o {
			if !strings.HasPrefix(sh.Election, root+"/buckets/") || sh.Member == "" {
				return false
			}
		}
		return len(o) == n
	})
	if out := runVerbCLI(t, root, "migrate"); !strings.Contains(out, "nothing changed") {
		t.Errorf("a second migrate printed %q", out)
	}
}
