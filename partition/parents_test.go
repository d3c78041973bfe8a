package partition_test

import (
	"fmt"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestShardParentsRacingMembers has three members create the same 2,000
// shard znodes at once, from different batch offsets, over a root where
// some exist already: every call succeeds and every znode exists once.
// Racing multis fail as a whole when another member got there first; they
// must be narrowed and retried, not given up.
func TestShardParentsRacingMembers(t *testing.T) {
	root := newRoot(t)
	ids := partition.Range(0, 2000)
	sessions := make([]*recipe.Session, 3)
	conns := make([]*zk.Conn, 3)
	for i := range conns {
		sessions[i] = connect(t, 2*time.Second)
		conns[i] = sessions[i].Conn()
	}
	dir := path.Join(root, "shards")
	for _, p := range []string{path.Dir(root), root, dir} {
		if _, err := conns[0].Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	for _, id := range []string{"0", "750", "1999"} { // made by an earlier member
		if _, err := conns[0].Create(path.Join(dir, id), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, s := range sessions {
		wg.Go(func() {
			errs[i] = partition.EnsureShardParents(t.Context(), s, root, ids, i*7, zk.WorldACL(zk.PermAll))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
	got, _, err := conns[0].Children(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(got, want) {
		t.Fatalf("%d shard znodes, want %d (first missing or extra: %v)", len(got), len(want), firstDiff(got, want))
	}
}

// firstDiff names the first element where two sorted lists differ.
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q vs %q", a[i], b[i])
		}
	}
	return "a longer list"
}
