package zxidfence_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

func newZooKeeper(t testing.TB, conn *zk.Conn) *zxidfence.ZooKeeper {
	z, err := zxidfence.NewZooKeeper(conn)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func expectZnode(t testing.TB, z *zxidfence.ZooKeeper, target string, f zxidfence.Fence, data string) {
	t.Helper()
	got, v, err := z.Read(testContext(t), target)
	if err != nil || got != f || string(v) != data {
		t.Fatalf("%s holds %s %q (err %v); want %s %q", target, got, v, err, f, data)
	}
}

func TestZooKeeperExpiredLeaderWriteFailsInsideZooKeeper(t *testing.T) {
	ctx := testContext(t)
	conn, states := connectZKEvents(t)
	dir := freshZnode(t, conn)
	target := dir + "/resource"
	a := campaign(t, conn, dir)
	z := newZooKeeper(t, conn)
	if err := z.Write(ctx, target, a, []byte("by A")); err != nil {
		t.Fatal(err)
	}
	// The session expires: ZooKeeper deletes A's ephemeral election znode.
	// go-zookeeper then opens a new session on the same *zk.Conn, and A,
	// unaware, writes again with its old leadership.
	mark := states.mark()
	if err := testenv.ExpireConn(ctx, zkc.Addrs(), conn); err != nil {
		t.Fatal(err)
	}
	states.await(ctx, t, mark, zk.StateExpired, zk.StateHasSession)
	err := z.Write(ctx, target, a, []byte("by A after expiry"))
	if !errors.Is(err, zxidfence.ErrNotLeader) {
		t.Fatalf("write after session expiry = %v; want ErrNotLeader", err)
	}
	expectZnode(t, z, target, a.Fence, "by A")
}

func TestZooKeeperElectionZnodeChangedIsNotLeader(t *testing.T) {
	ctx := testContext(t)
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	a := campaign(t, conn, dir)
	if _, err := conn.Set(a.Znode, []byte("touched"), a.Version); err != nil {
		t.Fatal(err)
	}
	err := newZooKeeper(t, conn).Write(ctx, dir+"/resource", a, []byte("x"))
	if !errors.Is(err, zxidfence.ErrNotLeader) {
		t.Fatalf("write after the election znode's version changed = %v; want ErrNotLeader", err)
	}
	if ok, _, _ := conn.Exists(dir + "/resource"); ok {
		t.Fatal("the refused write created its target")
	}
}

func TestZooKeeperLowerTokenRefusedByTargetRecord(t *testing.T) {
	ctx := testContext(t)
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	target := dir + "/resource"
	a := campaign(t, conn, dir) // both election znodes still exist:
	b := campaign(t, conn, dir) // only the fence recorded in target decides
	z := newZooKeeper(t, conn)
	if err := z.Write(ctx, target, b, []byte("by B")); err != nil {
		t.Fatal(err)
	}
	err := z.Write(ctx, target, a, []byte("by A"))
	var stale *zxidfence.StaleTokenError
	if !errors.As(err, &stale) || stale.Presented != a.Fence || stale.Highest != b.Fence || stale.Key != target {
		t.Fatalf("A's write after B's = %v; want *StaleTokenError naming %s and %s", err, a.Fence, b.Fence)
	}
	expectZnode(t, z, target, b.Fence, "by B")
}

func TestZooKeeperRefusesBadTargets(t *testing.T) {
	ctx := testContext(t)
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	a := campaign(t, conn, dir)
	z := newZooKeeper(t, conn)
	foreign := dir + "/foreign"
	if _, err := conn.Create(foreign, []byte("someone else's"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target string
		want   error
	}{
		{foreign, zxidfence.ErrNotFenced},
		{"relative", zxidfence.ErrInvalidKey},
		{dir + "/", zxidfence.ErrInvalidKey},
		{dir + "//x", zxidfence.ErrInvalidKey},
		{dir + "/missing-parent/x", zk.ErrNoNode},
	} {
		if err := z.Write(ctx, c.target, a, nil); !errors.Is(err, c.want) {
			t.Errorf("Write(%q) = %v; want %v", c.target, err, c.want)
		}
	}
	noToken := a
	noToken.Fence = zxidfence.Fence{}
	if err := z.Write(ctx, dir+"/x", noToken, nil); !errors.Is(err, zxidfence.ErrNoToken) {
		t.Errorf("Write without a token = %v; want ErrNoToken", err)
	}
	if _, err := zxidfence.NewZooKeeper(nil); err == nil {
		t.Error("NewZooKeeper(nil) succeeded")
	}
}

func TestZooKeeperAcceptGenerationKeepsData(t *testing.T) {
	ctx := testContext(t)
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	target := dir + "/resource"
	a := campaign(t, conn, dir)
	z := newZooKeeper(t, conn)
	if err := z.Write(ctx, target, a, []byte("payload")); err != nil {
		t.Fatal(err)
	}
	prev, err := z.AcceptGeneration(ctx, target, 4, "rebuilt")
	if err != nil || prev != a.Fence {
		t.Fatalf("AcceptGeneration = %s, %v; want previous %s", prev, err, a.Fence)
	}
	expectZnode(t, z, target, zxidfence.Fence{Generation: 4}, "payload")
	if err := z.Write(ctx, target, a, nil); !errors.Is(err, zxidfence.ErrStaleToken) {
		t.Fatalf("generation-0 leader after the change = %v; want ErrStaleToken", err)
	}
}

func TestZnodeDataLayout(t *testing.T) {
	f := zxidfence.Fence{Generation: 2, Token: zxidfence.NewToken(1, 5)}
	b := zxidfence.AppendZnodeData(nil, f, []byte("hi"))
	want := "ZXF1\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x05hi"
	if string(b) != want || len(b) != zxidfence.ZnodeHeaderSize+2 {
		t.Fatalf("AppendZnodeData = %q; want %q", b, want)
	}
	got, data, err := zxidfence.ParseZnodeData(b)
	if err != nil || got != f || string(data) != "hi" {
		t.Fatalf("ParseZnodeData = %s, %q, %v", got, data, err)
	}
	for _, bad := range []string{"ZXF1", "XXXX0000000000000000", "short"} {
		if _, _, err := zxidfence.ParseZnodeData([]byte(bad)); !errors.Is(err, zxidfence.ErrNotFenced) {
			t.Errorf("ParseZnodeData(%q) = %v; want ErrNotFenced", bad, err)
		}
	}
}

func TestZooKeeperWriteByAnotherGuardIsSeen(t *testing.T) {
	ctx := testContext(t)
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	target := dir + "/resource"
	a, b := campaign(t, conn, dir), campaign(t, conn, dir)
	mine, theirs := newZooKeeper(t, conn), newZooKeeper(t, connectZK(t))
	if err := mine.Write(ctx, target, a, []byte("A1")); err != nil {
		t.Fatal(err)
	}
	if err := theirs.Write(ctx, target, b, []byte("B")); err != nil {
		t.Fatal(err)
	}
	// mine remembers its own write (A's fence); the multi finds the target
	// changed, re-reads it and refuses.
	if err := mine.Write(ctx, target, a, []byte("A2")); !errors.Is(err, zxidfence.ErrStaleToken) {
		t.Fatalf("A's write after another guard wrote B's = %v; want ErrStaleToken", err)
	}
	expectZnode(t, mine, target, b.Fence, "B")
}

func TestZooKeeperDeposedLeaderRejectionNamesTheNewLeader(t *testing.T) {
	ctx := testContext(t)
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	target := dir + "/resource"
	a, b := campaign(t, conn, dir), campaign(t, conn, dir)
	z := newZooKeeper(t, conn)
	if err := z.Write(ctx, target, a, []byte("A")); err != nil {
		t.Fatal(err)
	}
	if err := conn.Delete(a.Znode, -1); err != nil { // A is deposed
		t.Fatal(err)
	}
	if err := newZooKeeper(t, conn).Write(ctx, target, b, []byte("B")); err != nil {
		t.Fatal(err)
	}
	// A's guard still remembers A's own write, so its multi runs and the
	// check of A's election znode fails inside ZooKeeper.
	err := z.Write(ctx, target, a, []byte("A again"))
	var stale *zxidfence.StaleTokenError
	if !errors.Is(err, zxidfence.ErrNotLeader) || !errors.As(err, &stale) || stale.Highest != b.Fence || stale.Presented != a.Fence {
		t.Fatalf("deposed A's write = %v; want ErrNotLeader and a *StaleTokenError naming %s and %s", err, a.Fence, b.Fence)
	}
}

// A target whose parent is missing is reported as such: the error once read
// "create /a/b: zk: node does not exist", as if the target were missing.
func TestZooKeeperMissingParentIsNamed(t *testing.T) {
	ctx := testContext(t)
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	target := dir + "/missing/resource"
	z := newZooKeeper(t, conn)
	want := "parent znode " + dir + "/missing does not exist"
	_, err := z.AcceptGeneration(ctx, target, 2, "test")
	if !errors.Is(err, zk.ErrNoNode) || !strings.Contains(err.Error(), want) {
		t.Fatalf("AcceptGeneration under a missing parent = %v; want ErrNoNode naming %q", err, want)
	}
	err = z.Write(ctx, target, campaign(t, conn, dir), []byte("x"))
	if !errors.Is(err, zk.ErrNoNode) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Write under a missing parent = %v; want ErrNoNode naming %q", err, want)
	}
}
