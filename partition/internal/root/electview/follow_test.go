package electview

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/testenv"
)

// follower runs Follow on a root until the end of the test, keeping the
// latest leaders it stepped with and its Synced.
type follower struct {
	mu      sync.Mutex
	leaders map[string]Leader
	synced  *Synced
	ended   chan struct{} // closed once Follow returned
	err     error         // what Follow returned, once ended is closed
	cancel  context.CancelFunc
}

func follow(t *testing.T, run func(ctx context.Context, step func(*rootdata.View, *Elections) (bool, error)) error) *follower {
	t.Helper()
	f := &follower{ended: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() {
		defer close(f.ended)
		f.err = run(ctx, func(_ *rootdata.View, e *Elections) (bool, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.leaders, f.synced = e.Leaders(), e.Synced()
			return true, nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if <-f.ended; f.err != nil {
			t.Errorf("Follow: %v", f.err)
		}
	})
	return f
}

// await polls the follower's leaders until ok holds, failing after limit
// with what was awaited.
func (f *follower) await(t *testing.T, limit time.Duration, what string, ok func(map[string]Leader) bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		f.mu.Lock()
		l := f.leaders
		f.mu.Unlock()
		if l != nil && ok(l) {
			return
		}
		select {
		case <-f.ended:
			t.Fatalf("Follow ended (%v) while waiting for %s", f.err, what)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last view %v", limit, what, l)
		}
	}
}

func (f *follower) syncedNow() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced != nil && f.synced.Now()
}

// TestViewReadsTheRootAgainAfterTheWatchEnded: the observer's connection
// is lost (and, in the second case, its session expired) while shard 0's
// leader resigns and a new election, shard 1, gets a leader. The server
// drops the persistent watch with the connection and sends none of those
// changes; once the observer is back the view re-adds the watch, lists
// the root and reads every election again, and shows b leading 0 and c
// leading 1, and is in sync again (Synced) only then.
func TestViewReadsTheRootAgainAfterTheWatchEnded(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, expire := range []bool{false, true} {
		t.Run(map[bool]string{false: "connection lost", true: "session expired"}[expire], func(t *testing.T) {
			root := testRoot(t)
			members := connectTo(t, zkc.Addrs(), 10*time.Second)
			a0 := campaign(t, members, root, "0", "a")
			campaign(t, members, root, "0", "b")
			p := zkc.NewProxyT(t)
			obs := connectTo(t, p.Addrs(), 4*time.Second)
			f := follow(t, func(ctx context.Context, step func(*rootdata.View, *Elections) (bool, error)) error {
				return Follow(ctx, obs, root, "test", step)
			})
			f.await(t, 30*time.Second, "a leading shard 0", func(l map[string]Leader) bool { return l["0"].Member == "a" })
			waitTrue(t, 30*time.Second, "the view in sync", f.syncedNow)

			p.Blackhole() // no reconnect gets through
			p.Cut()
			waitTrue(t, 30*time.Second, "the observer disconnected", func() bool { return !obs.Connected() })
			if expire {
				if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), obs.Conn()); err != nil {
					t.Fatalf("expire the observer's session: %v", err)
				}
			}
			if err := members.Delete(t.Context(), a0, -1); err != nil {
				t.Fatalf("a resigns shard 0: %v", err)
			}
			campaign(t, members, root, "1", "c")
			p.Heal()
			f.await(t, 30*time.Second, "b leading shard 0 and c shard 1, read again after the watch ended", func(l map[string]Leader) bool {
				return l["0"].Member == "b" && l["1"].Member == "c"
			})
			waitTrue(t, 30*time.Second, "the view in sync again", f.syncedNow)
		})
	}
}

// TestViewStartsOnceTheSessionIsBack: the view is started while its
// session is cut off past the session timeout (the daemon's /v1/watch
// starting during a partition). Its start once failed for good with the
// expired session's error; it waits instead, and once the link heals
// (a new session) it shows the leader and is in sync.
func TestViewStartsOnceTheSessionIsBack(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // after the sessions' cleanups
	root := testRoot(t)
	members := connectTo(t, zkc.Addrs(), 10*time.Second)
	campaign(t, members, root, "0", "a")
	p := zkc.NewProxyT(t)
	const timeout = 2 * time.Second
	obs := connectTo(t, p.Addrs(), timeout)
	p.Blackhole()
	p.Cut()
	waitTrue(t, 30*time.Second, "the observer disconnected", func() bool { return !obs.Connected() })
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), obs.Conn()); err != nil {
		t.Fatalf("expire the observer's session: %v", err)
	}
	f := follow(t, func(ctx context.Context, step func(*rootdata.View, *Elections) (bool, error)) error {
		return Follow(ctx, obs, root, "test", step)
	})
	select { // past the reads' own retries (twice the session timeout)
	case <-f.ended:
		t.Fatalf("Follow ended while cut off: %v", f.err)
	case <-time.After(3 * timeout):
	}
	p.Heal()
	f.await(t, 30*time.Second, "a leading shard 0 once the session is back", func(l map[string]Leader) bool { return l["0"].Member == "a" })
	waitTrue(t, 30*time.Second, "the view in sync", f.syncedNow)
}

// TestViewStaysInSyncWhileFollowingNewElections: once the view has read
// its listing, reads that follow notifications (here 100 new elections,
// each read whole) are the view following, not catching up: Synced stays
// true throughout. It once turned false until every such read was back,
// so /v1/watch refused new streams as "cut off" during ordinary churn.
func TestViewStaysInSyncWhileFollowingNewElections(t *testing.T) {
	root := testRoot(t)
	members := connectTo(t, zkc.Addrs(), 10*time.Second)
	campaign(t, members, root, "0", "a")
	obs := connectTo(t, zkc.Addrs(), 10*time.Second)
	f := follow(t, func(ctx context.Context, step func(*rootdata.View, *Elections) (bool, error)) error {
		return Follow(ctx, obs, root, "test", step)
	})
	f.await(t, 30*time.Second, "a leading shard 0", func(l map[string]Leader) bool { return l["0"].Member == "a" })
	waitTrue(t, 30*time.Second, "the view in sync", f.syncedNow)

	var samples, outOfSync atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			samples.Add(1)
			if !f.syncedNow() {
				outOfSync.Add(1)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	const elections = 100
	for i := 1; i <= elections; i++ {
		campaign(t, members, root, strconv.Itoa(i), "b")
	}
	f.await(t, 30*time.Second, "b leading every new shard", func(l map[string]Leader) bool { return len(l) == elections+1 })
	close(stop)
	<-sampled
	if n := outOfSync.Load(); n > 0 {
		t.Errorf("the view was out of sync in %d of %d samples while it followed new elections (connected throughout: %v)", n, samples.Load(), obs.Connected())
	}
}

// waitTrue polls cond until it holds, failing after limit with what was
// awaited.
func waitTrue(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
