package zxidfence_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestZooKeeperSessionGuardRefusesDeposedLeader: the guard over a
// recipe.Session (every request with its ctx, through the session's own
// calls) refuses a writer whose election znode changed, and a lower token
// than the target records, exactly as over a *zk.Conn.
func TestZooKeeperSessionGuardRefusesDeposedLeader(t *testing.T) {
	ctx := testContext(t)
	s, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	z, err := zxidfence.NewZooKeeperSession(s)
	if err != nil {
		t.Fatal(err)
	}
	conn := s.Conn() // setting up as another client would
	dir := freshZnode(t, conn)
	target := dir + "/resource"
	a := campaign(t, conn, dir)
	b := campaign(t, conn, dir)
	if err := z.Write(ctx, target, b, []byte("by B")); err != nil {
		t.Fatal(err)
	}
	var stale *zxidfence.StaleTokenError
	if err := z.Write(ctx, target, a, []byte("by A")); !errors.As(err, &stale) || stale.Highest != b.Fence {
		t.Fatalf("A's write after B's = %v; want *StaleTokenError naming %s", err, b.Fence)
	}
	if _, err := conn.Set(b.Znode, []byte("touched"), b.Version); err != nil {
		t.Fatal(err)
	}
	if err := z.Write(ctx, target, b, []byte("by B again")); !errors.Is(err, zxidfence.ErrNotLeader) {
		t.Fatalf("write after the election znode's version changed = %v; want ErrNotLeader", err)
	}
	expectZnode(t, z, target, b.Fence, "by B")
	if _, err := zxidfence.NewZooKeeperSession(nil); err == nil {
		t.Fatal("NewZooKeeperSession(nil) succeeded")
	}
}
