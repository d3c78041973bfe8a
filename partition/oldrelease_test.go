package partition_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// logLines is a zerolog writer that keeps every line, for tests that wait
// for a member to report something.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(p))
	return len(p), nil
}

// count returns how many lines contain every one of parts.
func (l *logLines) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// with reports whether a line contains every one of parts.
func (l *logLines) with(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// loggingTo makes a member log to lines.
func loggingTo(lines *logLines) func(*partition.Config) {
	return func(c *partition.Config) { c.Logger = zerolog.New(lines) }
}

// oldReleaseMember starts a member standing for a release before buckets
// (partition.RunAsReleaseBeforeBuckets), logging to lines.
func oldReleaseMember(t *testing.T, sess *recipe.Session, root, id string, shards []string, tr *tracker, lines *logLines, tune ...func(*partition.Config)) *member {
	t.Helper()
	mb := newMember(t, sess, root, id, shards, tr, append(tune, loggingTo(lines))...)
	mb.runs = func(ctx context.Context) error { return partition.RunAsReleaseBeforeBuckets(ctx, mb.m) }
	return mb
}

// TestReleaseBeforeBucketsLeadsNothingOnABucketedRoot: a member of a
// release before buckets that joins a bucketed root (open ACL) campaigns
// at <root>/shards/<id>, as it always did, and is refused there (NoAuth:
// <root>/shards grants only READ), so it leads nothing; the bucketed
// members deal it no shard (its record does not advertise buckets) and
// keep every shard led, with no overlap, also when one of them leaves
// (its shards all go to the other), and <root>/shards stays empty.
// Without the guard it would lead each shard it campaigns for beside the
// bucketed leader.
func TestReleaseBeforeBucketsLeadsNothingOnABucketedRoot(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	var aLog, oldLog logLines
	a := startMember(t, root, "a", shards, tr, loggingTo(&aLog))
	b := startMember(t, root, "b", shards, tr)
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)

	old := oldReleaseMember(t, connect(t, sessionTimeout), root, "old", shards, tr, &oldLog)
	old.run(t)
	oldStart := time.Now()
	waitFor(t, 20*time.Second, "the old release's campaign refused", func() (bool, string) {
		return oldLog.with(`"campaign"`, "denied by ZooKeeper ACL"), "no refused campaign logged yet"
	})
	waitFor(t, 20*time.Second, "a naming the old release's member", func() (bool, string) {
		return aLog.with("release before buckets", `"other":"old"`), "not logged yet"
	})
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	if n := tr.startsOf("old"); n != 0 || len(old.m.Leaderships()) != 0 {
		t.Errorf("the old release's member started %d leaderships (leads %v), want none", n, old.m.Leaderships())
	}
	if kids, _, err := a.sess.Conn().Children(root + "/shards"); err != nil || len(kids) != 0 {
		t.Errorf("<root>/shards of the bucketed root lists %v (%v), want nothing", kids, err)
	}
	if _, err := a.sess.Conn().Create(root+"/shards/0", nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("creating <root>/shards/0 in a bucketed root: %v, want zk.ErrNoAuth", err)
	}
	b.stop(t) // b's shards go to a alone: none is dealt to the old release's member
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	if n := tr.startsOf("old"); n != 0 {
		t.Errorf("the old release's member started %d leaderships after b left, want none", n)
	}
	old.stop(t)
	refused, shardsTried := oldLog.count(`"campaign"`, "denied by ZooKeeper ACL"), 0
	for _, sh := range shards {
		if oldLog.with(`"campaign"`, "denied by ZooKeeper ACL", `"shard":"`+sh+`"`) {
			shardsTried++
		}
	}
	t.Logf("the old release's member: %d refused campaigns of %d shards in %v", refused, shardsTried, time.Since(oldStart).Round(time.Millisecond))
	tr.check(t, true)
}

// TestReleaseBeforeBucketsIsRefusedOnASecuredBucketedRoot: with a secured
// ACL, a member of a release before buckets fails at Run, before it
// registers, with recipe.ErrACLDenied naming <root>/shards (its start's
// ACL check finds a znode that grants it no change), while the bucketed
// member, with the same credentials, runs on and leads every shard.
func TestReleaseBeforeBucketsIsRefusedOnASecuredBucketedRoot(t *testing.T) {
	root, shards, tr := securedRoot(t), partition.Range(0, 4), newTracker()
	group := func() *recipe.Session { return connectAs(t, recipe.WithDigestAuth(groupCred[0], groupCred[1])) }
	a := startMemberOn(t, group(), root, "a", shards, tr, withGroupACL)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)

	var oldLog logLines
	old := oldReleaseMember(t, group(), root, "old", shards, tr, &oldLog, withGroupACL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := partition.RunAsReleaseBeforeBuckets(ctx, old.m)
	if !errors.Is(err, recipe.ErrACLDenied) || !strings.Contains(err.Error(), root+"/shards") {
		t.Fatalf("the old release's Run = %v; want recipe.ErrACLDenied naming %s/shards", err, root)
	}
	if ctx.Err() != nil {
		t.Fatalf("Run returned only when its context ended: %v", err)
	}
	t.Logf("refused: %v", err)
	if ok, _, xerr := a.sess.Conn().Exists(root + "/members/old"); xerr != nil || ok {
		t.Errorf("the refused member is registered (%v, %v), want not", ok, xerr)
	}
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	tr.check(t, true)
}

// openBucketedRoot makes root bucketed by hand with an open <root>/shards,
// as a build before the lock made it (or a super user opened it), before
// any member of this release (which locks it) starts.
func openBucketedRoot(t *testing.T, conn *zk.Conn, root string) {
	t.Helper()
	createPersistent(t, conn, nil, "/partition-test", root, root+"/shards")
	createPersistent(t, conn, []byte(`{"layout":"buckets","buckets":1024}`), root+"/buckets")
}

// TestOwnersReportsAStrayElection: a bucketed root whose <root>/shards is
// open holds an election an older release made there; the first member
// of this release makes <root>/shards READ only (no further election can
// be made there), Owners reports the one made as the shard's Owner.Stray,
// and the member runs on in the buckets.
func TestOwnersReportsAStrayElection(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 4)
	sess := connect(t, sessionTimeout)
	openBucketedRoot(t, sess.Conn(), root)
	stray := root + "/shards/" + shards[3] // where an older release would campaign
	createPersistent(t, sess.Conn(), nil, stray)
	a := startMember(t, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	if _, err := sess.Conn().Create(root+"/shards/"+shards[2], nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("creating an election under <root>/shards after a member started: %v, want zk.ErrNoAuth (locked)", err)
	}
	owners, err := partition.Owners(t.Context(), sess, root)
	if err != nil || owners[shards[3]].Stray != stray || owners[shards[2]].Stray != "" || owners[shards[3]].Member != "a" {
		t.Errorf("Owners with an election under <root>/shards: %+v, %+v (%v); want it as the shard's Stray, led by a", owners[shards[3]], owners[shards[2]], err)
	}
	tr.check(t, true)
}
