package partition_test

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
)

// TestBucketedRootRunsAndOperatesOverBuckets: a root this release creates
// records its buckets in <root>/buckets and holds its 300 shards of
// 32-byte ids in them, none under <root>/shards; two members elect one
// leader each and balance them; Owners and WatchLeaders report every
// shard, a move hands one over, and prune deletes an election left in a
// bucket by a longer list.
func TestBucketedRootRunsAndOperatesOverBuckets(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), longIDs(300)
	sess := connect(t, sessionTimeout)
	tr.checkZnodes(t)
	ms := []*member{startMember(t, root, "a", shards, tr), startMember(t, root, "b", shards, tr)}
	log, stop := watchLeaders(t, sess, root)
	defer stop()
	before, _ := waitBalanced(t, shards, ms, 30*time.Second)
	waitFor(t, 10*time.Second, "WatchLeaders to report every leader", func() (bool, string) { return log.matches(ms) })

	data, _, err := sess.Conn().Get(root + "/buckets")
	if err != nil || string(data) != `{"layout":"buckets","buckets":1024}` {
		t.Fatalf("<root>/buckets holds %q (%v), want the bucket layout", data, err)
	}
	buckets, _, err := sess.Conn().Children(root + "/buckets")
	if err != nil || len(buckets) != 1024 || slices.ContainsFunc(buckets, func(b string) bool { return len(b) != 3 }) {
		t.Fatalf("<root>/buckets has %d children (%v), want its 1,024 buckets (3 hex digits), made with it", len(buckets), err)
	}
	if flat, _, err := sess.Conn().Children(root + "/shards"); err != nil || len(flat) != 0 {
		t.Fatalf("<root>/shards of a bucketed root holds %v (%v), want nothing", flat, err)
	}
	owners, err := partition.Owners(t.Context(), sess, root)
	if err != nil || len(owners) != len(shards) {
		t.Fatalf("Owners: %d shards, %v; want %d", len(owners), err, len(shards))
	}
	for _, s := range shards {
		o := owners[s]
		if o.Member != before[s] || path.Base(o.Election) != s || path.Dir(path.Dir(o.Election)) != root+"/buckets" {
			t.Fatalf("Owners[%s] = %+v; want leader %s, election in a bucket", s, o, before[s])
		}
	}

	op := newOperator(t, root)
	s := shardLedBy(t, before, "a")
	mctx, mcancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer mcancel()
	if changed, err := op.Move(mctx, s, "b"); err != nil || !changed {
		t.Fatalf("Move(%s, b) = %v, %v", s, changed, err)
	}
	if err := op.WaitMoved(mctx, s, "b"); err != nil {
		t.Fatalf("WaitMoved: %v", err)
	}
	if _, err := op.Move(mctx, "tenant-eu-west-1-shard-999999999", "b"); err == nil || !strings.Contains(err.Error(), "no election") {
		t.Errorf("move of a shard without an election: %v, want refused", err)
	}

	extra := "tenant-eu-west-1-shard-left-over"
	p := electionOf(t, sess, root, extra)
	createPersistent(t, sess.Conn(), nil, path.Dir(p), p)
	deleted, kept, err := operator.Prune(t.Context(), sess, root, shards, false)
	if err != nil || !slices.Equal(deleted, []string{extra}) || len(kept) != 0 {
		t.Fatalf("Prune = %v, %v, %v; want %s deleted", deleted, kept, err, extra)
	}
	if ok, _, _ := sess.Conn().Exists(p); ok {
		t.Errorf("%s survived Prune", p)
	}
	waitBalanced(t, shards, ms, 20*time.Second)
	// Not strict: a member starved past its session timeout on a loaded
	// machine has its znodes deleted by ZooKeeper before its callbacks
	// return, so its successor's start overlaps them by the callbacks'
	// times (TestPausedLeadersSuccessorsOverlapOnlyItsCallbacks); the
	// tracker checks that each overlapped znode was gone, and the guard
	// that no stale write was accepted.
	tr.check(t, false)
}

// TestFlatRootRefusesAListItCannotList: ids a bucketed root holds but a
// flat one cannot list in one getChildren pass NewManager, and Run on a
// flat root refuses them with the arithmetic, registering nothing.
func TestFlatRootRefusesAListItCannotList(t *testing.T) {
	sess := connect(t, sessionTimeout)
	root := newRoot(t)
	createPersistent(t, sess.Conn(), nil, "/partition-test", root, root+"/shards")
	ids := longIDs(30_000) // 30,000 x 36 bytes: 1,080,128 in one listing
	m, err := partition.NewManager(sess, root, partition.Config{MemberID: "m", Shards: ids})
	if err != nil {
		t.Fatalf("NewManager(30,000 ids of 32 bytes): %v (a bucketed root holds them)", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err = m.Run(ctx)
	overLimit(t, err, "Shards", "getChildren")
	if !strings.Contains(err.Error(), "listing 30000 shard ids of <root>/shards (flat: one listing)") || !strings.Contains(err.Error(), "1080128 bytes") {
		t.Errorf("Run's error %q does not state the arithmetic", err)
	}
	if ok, _, _ := sess.Conn().Exists(root + "/members/m"); ok {
		t.Errorf("the refused member registered")
	}
}

// TestRootOfALaterLayoutIsRefused: a root whose <root>/buckets records a
// layout this release cannot read is refused by Run and Owners with
// ErrUnknownLayout, naming the data, rather than run in a guessed layout.
func TestRootOfALaterLayoutIsRefused(t *testing.T) {
	sess := connect(t, sessionTimeout)
	root := newRoot(t)
	createPersistent(t, sess.Conn(), nil, "/partition-test", root, root+"/shards")
	createPersistent(t, sess.Conn(), []byte(`{"layout":"trie","fanout":64}`), root+"/buckets")
	m, err := partition.NewManager(sess, root, partition.Config{MemberID: "m", Shards: longIDs(3)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := m.Run(ctx); !errors.Is(err, partition.ErrUnknownLayout) || !strings.Contains(err.Error(), `"trie"`) {
		t.Errorf("Run on a root of a later layout: %v, want ErrUnknownLayout naming it", err)
	}
	if _, err := partition.Owners(ctx, sess, root); !errors.Is(err, partition.ErrUnknownLayout) {
		t.Errorf("Owners on a root of a later layout: %v, want ErrUnknownLayout", err)
	}
}
