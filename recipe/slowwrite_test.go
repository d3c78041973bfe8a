package recipe_test

import (
	"bytes"
	"context"
	"fmt"
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
	p.Blackhole()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer p.Heal()
	// The reads go out first, into empty socket buffers, and wait for
	// replies the partition holds back.
	cancels := make([]context.CancelFunc, probes)
	for i := range cancels {
		ctx, cancel := context.WithCancel(t.Context())
		cancels[i] = cancel
		path := fmt.Sprintf("%s/probe-%d", dir, i) // a watch of its own: its removal is written
		wg.Go(func() { _, _, _, _ = s.GetW(ctx, path) })
	}
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
