package partition_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// electionOf returns the znode of shard's election under root, in the
// root's layout.
func electionOf(t testing.TB, sess *recipe.Session, root, shard string) string {
	t.Helper()
	p, err := partition.ElectionPath(context.Background(), sess, root, shard)
	if err != nil {
		t.Fatalf("election path of shard %s: %v", shard, err)
	}
	return p
}

// longIDs returns n shard ids of 32 bytes.
func longIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("tenant-eu-west-1-shard-%09d", i)
	}
	return ids
}

// TestFlatRootRunsOldAndNewMembersTogether: a root created flat, as
// releases before buckets did, is read as flat by a member of this
// release: with a member standing for the older release the two balance
// the shards, each shard's one candidate (its leader, of either member)
// in <root>/shards/<id>, never in a bucket.
func TestFlatRootRunsOldAndNewMembersTogether(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), longIDs(40)
	old := newMember(t, connect(t, sessionTimeout), root, "old", shards, tr)
	partition.UseFlatLayout(old.m)
	old.run(t)
	waitBalanced(t, shards, []*member{old}, 20*time.Second)
	cur := startMember(t, root, "new", shards, tr)
	waitBalanced(t, shards, []*member{old, cur}, 30*time.Second)
	conn := cur.sess.Conn()
	if ok, _, err := conn.Exists(root + "/buckets"); err != nil || ok {
		t.Fatalf("flat root has a <root>/buckets (%v, %v), want none", ok, err)
	}
	children, _, err := conn.Children(root + "/shards")
	slices.Sort(children)
	want := slices.Sorted(slices.Values(shards))
	if err != nil || !slices.Equal(children, want) {
		t.Fatalf("flat root's <root>/shards lists %d children (%v), want the %d shards", len(children), err, len(shards))
	}
	for _, s := range shards {
		if p := electionOf(t, cur.sess, root, s); p != root+"/shards/"+s {
			t.Fatalf("shard %s's election at %s, want the flat path", s, p)
		}
		cands, _, err := conn.Children(root + "/shards/" + s)
		if err != nil || len(cands) != 1 {
			t.Errorf("shard %s: %d candidates in its flat election (%v), want its one leader", s, len(cands), err)
		}
	}
	tr.check(t, true)
}
