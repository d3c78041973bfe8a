package recipe_test

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestWatchRemovalOnAFullSocketHoldsNoLock: the proxy stops reading what
// the client sends (a partition), and go-zookeeper's large writes fill the
// socket, so every later write blocks. A GetW whose ctx ends as its
// request is being written has its watch removal written then: that write
// blocks too, but must not hold the session's lock (which every event of
// go-zookeeper's receive loop takes): the session still answers ID.
func TestWatchRemovalOnAFullSocketHoldsNoLock(t *testing.T) {
	// go-zookeeper gives up on a blocked write after two thirds of the
	// session timeout, which unblocks everything: with a 20s session a lock
	// held by one is seen for 13s, and the 3s bound is for a loaded machine.
	zks := testenv.New(t, testenv.Options{MaxSessionTimeout: 20 * time.Second})
	p := zks.NewProxyT(t)
	s := session(t, p.ConnectString(), recipe.WithSessionTimeout(20*time.Second))
	const bound = 3 * time.Second
	dir := electionPath(t) // never created: the fillers' creates fail after the heal
	p.Blackhole()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer p.Heal()
	data := bytes.Repeat([]byte("x"), 512<<10)
	for range 24 { // 12 MiB, more than the socket buffers hold
		wg.Go(func() { _, _ = s.Conn().Create(dir+"/filler", data, 0, zk.WorldACL(zk.PermAll)) })
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for probe := range 8 {
		ctx := newLateCancel(t.Context(), 2) // ends just as its request is written
		wg.Go(func() { _, _, _, _ = s.GetW(ctx, dir) })
		id := make(chan int64, 1)
		wg.Go(func() { id <- s.ID() })
		select {
		case <-id:
		case <-time.After(bound):
			t.Fatalf("probe %d: the session's lock is held by a blocked write (ID took over %v)", probe, bound)
		}
		<-tick.C
	}
}
