package partition_test

import (
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestMembersStartingTogetherDivideTheShardsAtOnce starts three members
// 100ms apart, well inside their startup settle: they must divide the
// shards without a single handoff, so every shard's leadership starts
// exactly once. Without the wait (StartupSettle < 0) the first member up
// campaigns for every shard and hands most of them on.
func TestMembersStartingTogetherDivideTheShardsAtOnce(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 90)
	settle := func(c *partition.Config) { c.StartupSettle = 1500 * time.Millisecond }
	ids := []string{"a", "b", "c"}
	var sessions []*recipe.Session
	for range ids { // connect first: the starts, not the connects, are 100ms apart
		sessions = append(sessions, connect(t, sessionTimeout))
	}
	var ms []*member
	for i, id := range ids {
		if i > 0 {
			time.Sleep(100 * time.Millisecond) // the start order under test, not synchronisation
		}
		ms = append(ms, startMemberOn(t, sessions[i], root, id, shards, tr, settle))
	}
	waitBalanced(t, shards, ms, 30*time.Second)
	// Leaderships() shows a leadership a moment before its OnStartedLeading
	// runs: wait for the callbacks of the current leaders, then count.
	// Every handoff would have added a start before these.
	starts := 0
	waitFor(t, 30*time.Second, "every current leader's OnStartedLeading", func() (bool, string) {
		starts = tr.startsOf("a") + tr.startsOf("b") + tr.startsOf("c")
		return starts >= len(shards), fmt.Sprintf("%d starts", starts)
	})
	if starts != len(shards) {
		t.Errorf("%d leaderships started for %d shards: members starting together handed shards on", starts, len(shards))
	}
	tr.check(t, true)
	// A session of its own: the members' short sessions may expire on a
	// loaded machine once the test has its answer.
	shardZnodesMadeByTheirLeaders(t, connect(t, 20*time.Second), root, shards)
}

// shardZnodesMadeByTheirLeaders checks that each shard's znode was created
// in one transaction with its one candidate's (the same czxid): the root
// was fresh, so each leader's create made its shard's znode too
// (recipe.WithNewElection) and no pass created them beforehand.
func shardZnodesMadeByTheirLeaders(t *testing.T, sess *recipe.Session, root string, shards []string) {
	t.Helper()
	for _, id := range shards {
		dir := electionOf(t, sess, root, id)
		_, shard, err := sess.Get(t.Context(), dir)
		if err != nil {
			t.Fatalf("read %s: %v", dir, err)
		}
		kids, _, err := sess.Children(t.Context(), dir)
		if err != nil || len(kids) != 1 {
			t.Fatalf("shard %s holds %v (%v), want its leader's znode alone", id, kids, err)
		}
		_, cand, err := sess.Get(t.Context(), path.Join(dir, kids[0]))
		if err != nil {
			t.Fatalf("read %s: %v", kids[0], err)
		}
		if cand.Czxid != shard.Czxid {
			t.Fatalf("shard %s: its znode was created at zxid %d, its leader's at %d: not in one transaction", id, shard.Czxid, cand.Czxid)
		}
	}
}

// TestExpectedMembersEndTheStartupWait: with ExpectedMembers 2 and a
// startup settle far longer than the test, a member alone waits (it leads
// nothing a second after its start), and the moment the second member
// registers both begin their elections and divide the shards without a
// handoff, long before the settle would have ended.
func TestExpectedMembersEndTheStartupWait(t *testing.T) {
	twoExpectedMembers(t, newTracker(), newRoot(t), "alone")
}

// TestExpectedMembersCountOnlyTheSameShardList: a member running another
// shard list under the same root is no member of ours for ExpectedMembers
// (the shards are dealt only among members with the same list), so a alone
// with it still waits; counted, a ended its wait at once, led all 20
// shards and handed half of them on when b joined.
func TestExpectedMembersCountOnlyTheSameShardList(t *testing.T) {
	tr, root, other := newTracker(), newRoot(t), partition.Range(20, 30)
	x := startMember(t, root, "x", other, tr)
	waitBalanced(t, other, []*member{x}, 30*time.Second)
	twoExpectedMembers(t, tr, root, "beside x (another shard list)")
}

// twoExpectedMembers starts a, then b, on 20 shards under root with
// ExpectedMembers 2 and a 5-minute startup settle: a must lead nothing a
// second after its start (it is alone of its kind: alone says how), and
// once b registers the two divide the shards without a handoff.
func twoExpectedMembers(t *testing.T, tr *tracker, root, alone string) {
	t.Helper()
	shards := partition.Range(0, 20)
	expect := func(c *partition.Config) { c.StartupSettle, c.ExpectedMembers = 5*time.Minute, 2 }
	a := startMember(t, root, "a", shards, tr, expect)
	time.Sleep(time.Second) // a's wait, not synchronisation: it must not end on its own
	if n := len(a.m.Leaderships()); n != 0 {
		t.Fatalf("a %s leads %d shards before its startup settle ended, want 0 (1 of 2 expected members)", alone, n)
	}
	b := startMember(t, root, "b", shards, tr, expect)
	waitBalanced(t, shards, []*member{a, b}, 30*time.Second)
	if starts := tr.startsOf("a") + tr.startsOf("b"); starts > len(shards) {
		t.Errorf("%d leaderships started for %d shards: the members handed shards on", starts, len(shards))
	}
	tr.check(t, true)
}
