package cli

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

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
