package partition_test

import (
	"context"
	"fmt"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestGraceAfterACutOffEndsWhenTheOthersEnds drives a member's loop by
// hand, stepping every 50 ms as a busy loop does, through a real cut-off
// of its session (blackholed until the server expired it) and a heal: the
// loop first learns of its new session at an instant swept in ticks from
// 3 before to 5 after the others' grace ends (the session's ephemeral
// znode seen deleted, plus RestartGrace). Whenever it learns of it after
// the others' grace ended, it reserves nothing: they count the grace from
// the expiry, and the loop now counts from the session's lease, which
// ends no later. It used to count from when it last saw the session
// connected, two thirds of a session timeout after the server last heard
// of it, and reserved its shards for up to that much after the others had
// dealt them elsewhere for good.
func TestGraceAfterACutOffEndsWhenTheOthersEnds(t *testing.T) {
	var wg sync.WaitGroup // every point at once, whatever -parallel says: each waits out seconds of timeouts
	for k := -3; k <= 5; k++ {
		wg.Go(func() {
			t.Run(fmt.Sprintf("learn%+dticks", k), func(t *testing.T) { learnNewSessionAt(t, time.Duration(k)*graceTick) })
		})
	}
	wg.Wait()
}

// learnNewSessionAt is one point of the sweep: the loop's first step on
// its new session comes offset after the others' grace ended.
func learnNewSessionAt(t *testing.T, offset time.Duration) {
	const grace = 3 * time.Second
	root, proxy := newRoot(t), zkc.NewProxyT(t)
	sess := connectTo(t, proxy.Addrs(), sessionTimeout)
	m, err := partition.NewManager(sess, root, partition.Config{MemberID: "c", Shards: partition.Range(0, 3), RestartGrace: grace})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	h := partition.NewHandLoop(m, partition.Range(0, 3))
	defer h.Close()
	probe := connect(t, 2*time.Second)
	mark := "/" + path.Base(root) + "-alive" // the session's ephemeral: its deletion is the expiry the others see
	if _, err := sess.Create(t.Context(), mark, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", mark, err)
	}
	h.Step()
	oldID := sess.ID()
	proxy.Blackhole()
	stepping, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // the loop's steps while cut off: every event would make one
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stepping.Done():
				return
			case <-tick.C:
				h.Step()
			}
		}
	}()
	gone := awaitDeleted(t, probe, mark, 10*time.Second)
	stop()
	<-done
	proxy.Heal()
	waitFor(t, 20*time.Second, "c's new session", func() (bool, string) {
		id := sess.ID()
		return id != oldID && id != 0, fmt.Sprintf("session 0x%x", id)
	})
	learn := gone.Add(grace + offset)
	if time.Now().After(learn) {
		t.Skipf("the new session came %v after the instant under test", time.Since(learn))
	}
	time.Sleep(time.Until(learn)) // the instant under test, not synchronisation
	h.Step()
	got := h.Reserved()
	if offset > 0 && len(got) != 0 {
		t.Errorf("learnt of its new session %v after the others' grace ended, the loop reserves %v; want nothing", offset, got)
	}
	t.Logf("learnt %+v after the others' grace ended: reserves %v", offset, got)
}

// graceTick is the shared test server's tickTime: the sweep's step.
const graceTick = 100 * time.Millisecond

// awaitDeleted polls p every 10ms until it does not exist, and returns
// when it saw it gone.
func awaitDeleted(t *testing.T, sess *recipe.Session, p string, timeout time.Duration) time.Time {
	t.Helper()
	at := awaitDeletedQuiet(sess, p, timeout)
	if at.IsZero() {
		t.Fatalf("timed out after %v waiting for %s to be deleted", timeout, p)
	}
	return at
}

// awaitDeletedQuiet is awaitDeleted returning the zero time on a timeout.
func awaitDeletedQuiet(sess *recipe.Session, p string, timeout time.Duration) time.Time {
	var at time.Time
	_, _, _ = tryWaitFor(timeout, func() (bool, string) {
		ok, _, err := sess.Exists(context.Background(), p)
		if err == nil && !ok {
			at = time.Now()
			return true, ""
		}
		return false, ""
	})
	return at
}
