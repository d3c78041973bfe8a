package partition_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/zxidfence"
)

// flatMember starts a member of this release that creates a missing root
// flat, as a release before buckets did.
func flatMember(t *testing.T, root, id string, shards []string, tr *tracker, tune ...func(*partition.Config)) *member {
	t.Helper()
	mb := newFlatMember(t, root, id, shards, tr, tune...)
	mb.run(t)
	return mb
}

// newFlatMember makes, without running it, a member that creates a
// missing root flat.
func newFlatMember(t *testing.T, root, id string, shards []string, tr *tracker, tune ...func(*partition.Config)) *member {
	t.Helper()
	mb := newMember(t, connect(t, sessionTimeout), root, id, shards, tr, tune...)
	partition.UseFlatLayout(mb.m)
	return mb
}

// allTokens returns shard → token over the members' leaderships.
func allTokens(ms ...*member) map[string]zxidfence.Token {
	out := map[string]zxidfence.Token{}
	for _, mb := range ms {
		for s, tok := range mb.m.Leaderships() {
			out[s] = tok
		}
	}
	return out
}

// checkMigrated fails unless root is bucketed and done moving: <root>/shards
// empty, the layout without its mark, every shard led in its bucket by
// one of ms with a token larger than before's.
func checkMigrated(t *testing.T, root string, shards []string, ms []*member, before map[string]zxidfence.Token) {
	t.Helper()
	conn := ms[0].sess.Conn()
	if kids, _, err := conn.Children(root + "/shards"); err != nil || len(kids) != 0 {
		t.Errorf("<root>/shards after the move holds %d elections (%v), want none", len(kids), err)
	}
	if data, _, err := conn.Get(root + "/buckets"); err != nil || string(data) != `{"layout":"buckets","buckets":1024}` {
		t.Errorf("<root>/buckets holds %q (%v), want the bucketed layout without the move's mark", data, err)
	}
	waitBalanced(t, shards, ms, 30*time.Second)
	owners, err := partition.Owners(t.Context(), ms[0].sess, root)
	if err != nil {
		t.Fatalf("Owners: %v", err)
	}
	after := allTokens(ms...)
	for _, s := range shards {
		if o := owners[s]; !strings.HasPrefix(o.Election, root+"/buckets/") || o.Member == "" {
			t.Errorf("shard %s after the move: %+v, want led in its bucket", s, o)
		}
		if p := electionOf(t, ms[0].sess, root, s); !strings.HasPrefix(p, root+"/buckets/") {
			t.Errorf("shard %s: ElectionPath %s, want its bucket", s, p)
		}
		if tok, ok := before[s]; ok && after[s] <= tok {
			t.Errorf("shard %s: token %v after the move, %v before; want larger", s, after[s], tok)
		}
	}
}

// TestRollingUpgradeMovesAFlatRootToBuckets: three members of a release
// before buckets run a flat root; the move to buckets is refused while
// any of them is live; they are upgraded one at a time (each gets its
// shards back within its restart grace), then MigrateToBuckets moves
// every shard from its flat election to its bucketed one while they run:
// each shard is handed by its leader to itself (OnStoppedLeading with
// ErrMovedToBuckets before the new OnStartedLeading), no two leaderships
// of a shard overlap, the guard accepts no stale write, every token after
// the move is larger than the shard's token before it, and the root ends
// bucketed with <root>/shards empty.
func TestRollingUpgradeMovesAFlatRootToBuckets(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 60)
	tr.checkZnodes(t)
	var moved atomic.Int64 // leaderships ended by the move
	var mu sync.Mutex
	stoppedAt, gaps := map[string]time.Time{}, []time.Duration{} // the move's leaderless gaps
	grace := func(c *partition.Config) {
		c.RestartGrace = 20 * time.Second
		stopped, started := c.OnStoppedLeading, c.OnStartedLeading
		c.OnStoppedLeading = func(s string, reason error) {
			if errors.Is(reason, partition.ErrMovedToBuckets) {
				moved.Add(1)
				mu.Lock()
				stoppedAt[s] = time.Now()
				mu.Unlock()
			}
			stopped(s, reason)
		}
		c.OnStartedLeading = func(ctx context.Context, s string, tok zxidfence.Token) {
			mu.Lock()
			if at, ok := stoppedAt[s]; ok {
				gaps = append(gaps, time.Since(at))
				delete(stoppedAt, s)
			}
			mu.Unlock()
			started(ctx, s, tok)
		}
	}
	ids := []string{"a", "b", "c"}
	ms := make([]*member, len(ids))
	for i, id := range ids {
		ms[i] = newMember(t, connect(t, sessionTimeout), root, id, shards, tr, grace)
		m := ms[i].m
		ms[i].runs = func(ctx context.Context) error { return partition.RunAsReleaseBeforeBuckets(ctx, m) }
		ms[i].run(t)
	}
	waitBalanced(t, shards, ms, 30*time.Second)
	op, err := operator.New(connect(t, 10*time.Second), root, nil) // an operator's own session
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := op.MigrateToBuckets(ctx); !errors.Is(err, operator.ErrRefused) {
		t.Fatalf("MigrateToBuckets with members of a release before buckets = %v, want ErrRefused", err)
	}
	for i, id := range ids {
		ms[i].stop(t)
		ms[i] = startMember(t, root, id, shards, tr, grace)
		waitBalanced(t, shards, ms, 30*time.Second)
		if i < len(ids)-1 {
			if _, err := op.MigrateToBuckets(ctx); !errors.Is(err, operator.ErrRefused) || !strings.Contains(err.Error(), ids[len(ids)-1]) {
				t.Fatalf("MigrateToBuckets with %s not upgraded = %v, want ErrRefused naming it", ids[len(ids)-1], err)
			}
		}
	}
	before := allTokens(ms...)
	if changed, err := op.MigrateToBuckets(ctx); err != nil || !changed {
		t.Fatalf("MigrateToBuckets = %v, %v; want started", changed, err)
	}
	if err := op.WaitMigrated(ctx); err != nil {
		t.Fatalf("WaitMigrated: %v", err)
	}
	checkMigrated(t, root, shards, ms, before)
	if n := moved.Load(); n != int64(len(shards)) {
		t.Errorf("%d flat leaderships ended with ErrMovedToBuckets, want one a shard (%d)", n, len(shards))
	}
	mu.Lock()
	slices.Sort(gaps)
	if len(gaps) > 0 {
		t.Logf("the move's leaderless gaps over %d shards: median %v, max %v", len(gaps), gaps[len(gaps)/2], gaps[len(gaps)-1])
	}
	mu.Unlock()
	tr.check(t, true)
}

// TestMemberKilledMidMigrationLeavesNoShardBehind: a member process is
// killed (SIGKILL, no watchdog) right after the move to buckets starts:
// its flat leaderships end with its session, the other member takes them
// over in their buckets, and the move completes, marked done by that
// member (no operator waits), with every shard led once.
func TestMemberKilledMidMigrationLeavesNoShardBehind(t *testing.T) {
	const n = 40
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, n)
	tr.checkZnodes(t) // a start overlapping the killed child's leadership must find its znode gone
	guardURL := tr.serve(t)
	a := flatMember(t, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	child := startChild(t, "c", root, n, guardURL)
	waitFor(t, 30*time.Second, "the child to lead its share", func() (bool, string) {
		lead := leaders(t, []*member{a})
		return len(lead) == n/2, fmt.Sprintf("a leads %d", len(lead))
	})
	before := allTokens(a)
	startMigration(t, root)
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	// No waiter: the surviving member ends the move once <root>/shards is empty.
	waitFor(t, 30*time.Second, "the move marked done", func() (bool, string) {
		data, _, err := a.sess.Conn().Get(root + "/buckets")
		return err == nil && string(data) == `{"layout":"buckets","buckets":1024}`, fmt.Sprintf("%q, %v", data, err)
	})
	checkMigrated(t, root, shards, []*member{a}, before)
	tr.check(t, false) // the killed child never calls OnStoppedLeading: its znodes are checked gone
}

// TestFlatCandidateHoldsItsShardsMoveBack: a candidate the members do not
// know (a member of an older release that joined after the move started)
// sits in one shard's flat election, and leads it there once the
// members' own leader of the shard steps down for the move. The other
// shards move to buckets; that shard is led in its bucket by nobody while
// the candidate is there (else it would have two leaders), and moves once
// the candidate leaves.
func TestFlatCandidateHoldsItsShardsMoveBack(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 10)
	a := flatMember(t, root, "a", shards, tr)
	b := startMember(t, root, "b", shards, tr)
	ms := []*member{a, b}
	waitBalanced(t, shards, ms, 20*time.Second)
	held := shards[4]
	outsider := connect(t, 10*time.Second)
	z, err := outsider.Conn().Create(root+"/shards/"+held+"/_c_00000000-0000-0000-0000-000000000000-latch-", []byte("old"),
		zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	op := startMigration(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	waitFor(t, 30*time.Second, "every other shard led in its bucket", func() (bool, string) {
		owners, err := partition.Owners(ctx, a.sess, root)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range shards {
			if o := owners[s]; s != held && (o.Member == "" || !strings.HasPrefix(o.Election, root+"/buckets/")) {
				return false, fmt.Sprintf("shard %s: %+v", s, o)
			}
		}
		return true, ""
	})
	if lead := leaders(t, ms); lead[held] != "" {
		t.Fatalf("shard %s led by %s while a flat candidate it does not know is in its flat election", held, lead[held])
	}
	if err := outsider.Conn().Delete(z, -1); err != nil {
		t.Fatal(err)
	}
	if err := op.WaitMigrated(ctx); err != nil {
		t.Fatalf("WaitMigrated: %v", err)
	}
	checkMigrated(t, root, shards, ms, nil)
	tr.check(t, true)
}

// startMigration starts the move of root to buckets from an operator of
// its own session, failing the test unless it started; it returns the
// operator.
func startMigration(t *testing.T, root string) *operator.Operator {
	t.Helper()
	op, err := operator.New(connect(t, 10*time.Second), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if changed, err := op.MigrateToBuckets(ctx); err != nil || !changed {
		t.Fatalf("MigrateToBuckets = %v, %v; want started", changed, err)
	}
	return op
}
