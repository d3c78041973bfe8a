package recipe_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestWatchRemovalOnAFullSocketHoldsNoLock: the proxy stops reading what
// the client sends (a partition), and go-zookeeper's large writes fill the
// socket, so every later write blocks. A GetW whose request went out before
// the socket filled, and whose ctx ends while it waits for the reply, has
// its watch removal written then: that write blocks too, but must not hold
// the session's lock (which every event of go-zookeeper's receive loop
// takes): the session still answers ID. (Writing the removal under the lock
// fails here: checked.)
func TestWatchRemovalOnAFullSocketHoldsNoLock(t *testing.T) {
	// go-zookeeper gives up on a blocked write after two thirds of the
	// session timeout, which unblocks everything: with a 20s session a lock
	// held by one is seen for 13s, and the 3s bound is for a loaded machine.
	zks := testenv.New(t, testenv.Options{MaxSessionTimeout: 20 * time.Second})
	p := zks.NewProxyT(t)
	s := session(t, p.ConnectString(), recipe.WithSessionTimeout(20*time.Second))
	const bound, probes = 3 * time.Second, 8
	dir := electionPath(t) // never created: the fillers' creates fail after the heal
	// The reads go out first and reach the server, whose answers the
	// proxy holds back (the latency, then the partition): each waits for
	// its reply with its watch set, on a znode of its own (a read of a
	// missing znode sets none).
	raw := rawConn(t, zks.ConnectString())
	probeDir := electionPath(t)
	ensurePath(t, raw, probeDir)
	p.SetLatency(4 * time.Second) // past it (a machine too loaded to see the watches set) the test proves nothing, and fails nothing
	var wg sync.WaitGroup
	defer wg.Wait()
	defer p.Heal()
	cancels := make([]context.CancelFunc, probes)
	paths := make([]string, probes)
	for i := range cancels {
		ctx, cancel := context.WithCancel(t.Context())
		cancels[i] = cancel
		paths[i] = fmt.Sprintf("%s/probe-%d", probeDir, i) // a watch of its own: its removal is written
		ensurePath(t, raw, paths[i])
		wg.Go(func() { _, _, _, _ = s.GetW(ctx, paths[i]) })
	}
	waitWatched(t, zks, s.ID(), paths)
	p.Blackhole()
	data := bytes.Repeat([]byte("x"), 512<<10)
	for range 24 { // 12 MiB, more than the socket buffers hold
		wg.Go(func() { _, _ = s.Conn().Create(dir+"/filler", data, 0, zk.WorldACL(zk.PermAll)) })
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for probe, cancel := range cancels {
		<-tick.C
		cancel() // its removal is written now, behind the fillers
		id := make(chan int64, 1)
		wg.Go(func() { id <- s.ID() })
		select {
		case <-id:
		case <-time.After(bound):
			t.Fatalf("probe %d: the session's lock is held by a blocked write (ID took over %v)", probe, bound)
		}
	}
}

// waitWatched waits until the server of zks holds a watch of session id on
// each of paths.
func waitWatched(t *testing.T, zks *testenv.Cluster, id int64, paths []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	for {
		watched, err := zks.Wchc(ctx, 0)
		if err != nil {
			t.Fatalf("watches of session %#x on %v: %v", id, paths, err)
		}
		if got := watched[id]; len(got) >= len(paths) && containsAll(got, paths) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("session %#x: watches %v, want %v", id, watched[id], paths)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// containsAll reports whether sorted has every element of want.
func containsAll(sorted, want []string) bool {
	for _, w := range want {
		if _, ok := slices.BinarySearch(sorted, w); !ok {
			return false
		}
	}
	return true
}
