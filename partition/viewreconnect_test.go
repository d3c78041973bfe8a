package partition_test

import (
	"context"
	"errors"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestWatchClusterCatchesUpAfterAReconnect: the observer's connection is
// held (blackholed) while s's leader leaves and another candidate leads,
// then cut: the server forgot the observer's persistent watch with the
// connection. On the next connection WatchCluster adds it again, reads
// the elections afresh and shows the new leader, and later changes reach
// it again.
func TestWatchClusterCatchesUpAfterAReconnect(t *testing.T) {
	root, writer := newRoot(t), connect(t, 5*time.Second)
	proxy := zkc.NewProxyT(t)
	obs := connectTo(t, proxy.Addrs(), 10*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := partition.EnsureRoot(ctx, writer, root); err != nil {
		t.Fatal(err)
	}
	acl := zk.WorldACL(zk.PermAll)
	election, err := partition.ElectionPath(ctx, writer, root, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Create(ctx, path.Dir(election), nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := writer.Create(ctx, election, nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	candidate := func(member string) (string, zxidfence.Token) {
		t.Helper()
		p, err := writer.Create(ctx, election+"/n_", []byte(member), zk.FlagEphemeral|zk.FlagSequence, acl)
		if err != nil {
			t.Fatal(err)
		}
		_, st, err := writer.Get(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return p, zxidfence.Token(st.Czxid)
	}
	seen := make(chan leaderSeen, 64)
	done := make(chan error, 1)
	go func() {
		done <- partition.WatchCluster(ctx, obs, root, func(c partition.Cluster) {
			l := c.Leaders["s"]
			report(ctx, seen, leaderSeen{l.Member, l.Token})
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchCluster: %v", err)
		}
	}()
	await := func(what string, want leaderSeen) {
		t.Helper()
		for {
			select {
			case got := <-seen:
				if got == want {
					return
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: WatchCluster did not show s as %+v within 30s", what, want)
			}
		}
	}
	b, bToken := candidate("b")
	await("b first", leaderSeen{"b", bToken})
	proxy.Blackhole()
	_, cToken := candidate("c")
	if err := writer.Delete(ctx, b, -1); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	proxy.Heal()
	await("c leading, changed while the observer was cut off", leaderSeen{"c", cToken})
	_, dToken := candidate("d")
	if err := writer.Delete(ctx, election+"/"+path.Base(firstChild(t, writer, election)), -1); err != nil {
		t.Fatal(err)
	}
	await("d leading, after the reconnect", leaderSeen{"d", dToken})
}

// firstChild returns the candidate of election with the lowest sequence.
func firstChild(t *testing.T, sess interface {
	Children(context.Context, string) ([]string, *zk.Stat, error)
}, election string) string {
	t.Helper()
	names, _, err := sess.Children(t.Context(), election)
	if err != nil || len(names) == 0 {
		t.Fatalf("list %s: %v %v", election, names, err)
	}
	first := names[0]
	for _, n := range names[1:] {
		if n[len(n)-10:] < first[len(first)-10:] {
			first = n
		}
	}
	return first
}
