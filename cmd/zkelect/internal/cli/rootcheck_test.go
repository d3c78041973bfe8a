package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestVerbsRootCheckOutlastsACutOff: the check every operator verb makes
// first (checkIsRoot, before drain --wait or move) runs while its session
// is cut off from ZooKeeper past the session timeout, expired by the
// server. It once failed the verb with the connection's error; it waits
// for the new session and passes once the link heals.
func TestVerbsRootCheckOutlastsACutOff(t *testing.T) {
	root := testPath(t)
	s := testSession(t)
	for _, p := range []string{"/cmdtest", root, root + "/members"} {
		if _, err := s.Create(t.Context(), p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	proxy := zkc.NewProxyT(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	const timeout = 2 * time.Second
	cut, err := recipe.Connect(ctx, proxy.Addrs(), recipe.WithSessionTimeout(timeout))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cut.Close()
	proxy.Blackhole()
	proxy.Cut()
	eventually(t, 30*time.Second, "the session disconnected", func() bool { return !cut.Connected() })
	if err := testenv.ExpireConn(ctx, zkc.Addrs(), cut.Conn()); err != nil {
		t.Fatalf("expire the session: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- checkIsRoot(ctx, cut, root) }()
	select { // past the reads' own retries (twice the session timeout)
	case err := <-done:
		t.Fatalf("checkIsRoot ended while cut off: %v", err)
	case <-time.After(3 * timeout):
	}
	proxy.Heal()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("checkIsRoot once healed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("checkIsRoot still waiting 30s after the link healed")
	}
}
