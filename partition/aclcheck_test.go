package partition_test

import (
	"context"
	"errors"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/recipe"
)

// securedRoot returns a root one level below the tests' shared open
// prefix, so that its parent is the test's own.
func securedRoot(t testing.TB) string { return newRoot(t) + "/root" }

// runRefused runs a group member on root and returns Run's error, which
// must come before the member leads anything.
func runRefused(t *testing.T, root string, tune ...func(*partition.Config)) error {
	t.Helper()
	cfg := partition.Config{MemberID: "m", Shards: partition.Range(0, 2), ACL: recipe.GroupACL()}
	for _, f := range tune {
		f(&cfg)
	}
	m, err := partition.NewManager(connectAs(t, recipe.WithDigestAuth(groupCred[0], groupCred[1])), root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = m.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run returned only when its context ended: %v", err)
	}
	return err
}

// createOpen creates each path open, as an anonymous client can.
func createOpen(t *testing.T, sess *recipe.Session, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := sess.Create(context.Background(), p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

// groupRoot returns a root the group made with its ACL (root, its
// children and the operator znode, through an operator verb), and the
// group's session.
func groupRoot(t *testing.T) (string, *recipe.Session) {
	t.Helper()
	root := securedRoot(t)
	group := connectAs(t, recipe.WithDigestAuth(groupCred[0], groupCred[1]))
	op, err := operator.New(group, root, recipe.GroupACL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Freeze(context.Background(), "creates the root", time.Minute); err != nil {
		t.Fatal(err)
	}
	return root, group
}

// TestSquattedRootIsRefused: a root an anonymous client created open
// before the first start, with its operator znode, is refused by a secured
// member, naming the root and its ACL; accepted explicitly, it runs.
func TestSquattedRootIsRefused(t *testing.T) {
	root := securedRoot(t)
	anon := connect(t, sessionTimeout)
	createOpen(t, anon, path.Dir(path.Dir(root)), path.Dir(root), root, root+"/members", root+"/owners", root+"/shards", root+"/operator")

	err := runRefused(t, root)
	var unsafe *recipe.UnsafeACLError
	if !errors.As(err, &unsafe) || unsafe.Path != root || recipe.FormatACL(unsafe.ACL) != "world:anyone:cdrwa" {
		t.Fatalf("Run on a squatted root = %v; want an *recipe.UnsafeACLError naming %s with world:anyone:cdrwa", err, root)
	}
	if kids, _, err := anon.Children(context.Background(), root+"/members"); err != nil || len(kids) != 0 {
		t.Fatalf("members after the refusal: %v %v; want none", kids, err)
	}

	shards := partition.Range(0, 2)
	mb := startMemberOn(t, connectAs(t, recipe.WithDigestAuth(groupCred[0], groupCred[1])), root, "a", shards, newTracker(),
		withGroupACL, func(c *partition.Config) { c.ACLCheck = recipe.ACLCheckWarn })
	waitBalanced(t, shards, []*member{mb}, 20*time.Second)
}

// TestOpenOperatorZnodeIsRefused: in a root the group owns, an operator
// znode others may write (left by an operator verb run with --acl open)
// is refused by name.
func TestOpenOperatorZnodeIsRefused(t *testing.T) {
	root, group := groupRoot(t)
	if err := group.Delete(context.Background(), root+"/operator", -1); err != nil {
		t.Fatal(err)
	}
	createOpen(t, group, root+"/operator")
	err := runRefused(t, root)
	var unsafe *recipe.UnsafeACLError
	if !errors.As(err, &unsafe) || unsafe.Path != root+"/operator" {
		t.Fatalf("Run with an open operator znode = %v; want an *recipe.UnsafeACLError naming %s/operator", err, root)
	}
}

// TestIdleRootCannotBeDeletedByOthers: a root a secured member made
// cannot be deleted or squatted by an anonymous client once its members
// are gone: its children and the operator znode carry the group's ACL,
// its parent (a shared level, recipe.SharedParentACL) grants nobody
// delete.
func TestIdleRootCannotBeDeletedByOthers(t *testing.T) {
	root, group := groupRoot(t)
	anon := connect(t, sessionTimeout)
	for _, p := range []string{root + "/operator", root + "/buckets/000", root + "/buckets", root + "/shards", root + "/members", root + "/owners"} {
		if err := anon.Delete(context.Background(), p, -1); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("an anonymous client deleting %s: %v; want zk.ErrNoAuth", p, err)
		}
	}
	if _, err := anon.Set(context.Background(), root+"/operator", []byte("{}"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an anonymous client writing the operator znode: %v; want zk.ErrNoAuth", err)
	}
	// Emptied by the group, the root still cannot be deleted by others.
	buckets, _, err := group.Children(context.Background(), root+"/buckets")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		if err := group.Delete(context.Background(), root+"/buckets/"+b, -1); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{root + "/operator", root + "/buckets", root + "/shards", root + "/members", root + "/owners"} {
		if err := group.Delete(context.Background(), p, -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := anon.Delete(context.Background(), root, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("an anonymous client deleting the empty root %s: %v; want zk.ErrNoAuth (its parent, a shared level, grants nobody delete)", root, err)
	}
}

// TestOpenShardElectionIsRefused: in a root whose named znodes carry the
// group's ACL (an earlier, open release's root secured by hand with
// setAcl), a shard election left open, through which anyone may delete
// its leader's znode, is refused by name.
func TestOpenShardElectionIsRefused(t *testing.T) {
	root, group := groupRoot(t)
	bucket := root + "/buckets/000" // an empty bucket, the parent of shards' elections
	if err := group.Delete(context.Background(), bucket, -1); err != nil {
		t.Fatal(err)
	}
	createOpen(t, group, bucket)
	err := runRefused(t, root)
	var unsafe *recipe.UnsafeACLError
	if !errors.As(err, &unsafe) || unsafe.Path != bucket {
		t.Fatalf("Run with an open bucket = %v; want an *recipe.UnsafeACLError naming %s", err, bucket)
	}

	shards := partition.Range(0, 2)
	mb := startMemberOn(t, group, root, "a", shards, newTracker(),
		withGroupACL, func(c *partition.Config) { c.ACLCheck = recipe.ACLCheckWarn })
	waitBalanced(t, shards, []*member{mb}, 20*time.Second)
}
