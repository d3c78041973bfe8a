package recipe_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// throttledServer starts a server whose request throttle marks requests
// that waited over 5 ms behind one in flight as throttled: it answers them
// ZTHROTTLEDOP (-127, ZooKeeper 3.6+), which means "retry".
func throttledServer(t *testing.T) *testenv.Cluster {
	return testenv.New(t, testenv.Options{SystemProperties: map[string]string{
		"zookeeper.request_throttle_max_requests": "1",
		"zookeeper.throttled_op_wait_time":        "5",
	}})
}

// loadReads runs readers looping syncs of "/" on sessions of their own
// until ctx ends, and returns how many of their reads were throttled.
func loadReads(ctx context.Context, t *testing.T, servers string, readers int) (throttled *atomic.Int64, wg *sync.WaitGroup) {
	throttled, wg = &atomic.Int64{}, &sync.WaitGroup{}
	for i := range readers {
		var s *recipe.Session
		if i%8 == 0 || s == nil {
			s = session(t, servers)
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				err := s.Sync(ctx, "/") // a sync is not retried (a read would be)
				if err != nil && strings.Contains(err.Error(), "THROTTLEDOP") {
					throttled.Add(1)
				}
			}
		})
	}
	return throttled, wg
}

// TestThrottledRequestsNeverEndRun: with a server throttling requests
// under load, 20 Run calls on one session keep campaigning (each term's
// function returns at once, so they create and delete znodes all along)
// until their context ends; once the load stops every one of them leads,
// and every resign's delete gets through.
func TestThrottledRequestsNeverEndRun(t *testing.T) {
	zkt := throttledServer(t)
	servers := zkt.ConnectString()
	loadCtx, stopLoad := context.WithCancel(t.Context())
	throttled, readers := loadReads(loadCtx, t, servers, 32)
	defer readers.Wait()
	defer stopLoad()

	s := session(t, servers)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const runs = 20
	var paths []string
	terms := make([]atomic.Int64, runs)
	ended := make(chan error, runs)
	for i := range runs {
		path := electionPath(t)
		paths = append(paths, path)
		c := candidate(t, s, path)
		go func() {
			ended <- recipe.Run(ctx, c, func(context.Context, zxidfence.Token) error {
				terms[i].Add(1)
				return nil
			})
		}()
	}
	deadline := time.After(4 * time.Second)
	for waiting := true; waiting; {
		select {
		case err := <-ended:
			t.Fatalf("Run returned %v while its context lived (throttled reads so far: %d)", err, throttled.Load())
		case <-deadline:
			waiting = false
		}
	}
	if throttled.Load() == 0 {
		t.Fatal("the server throttled no read: the test proves nothing (request throttle properties not applied?)")
	}
	stopLoad()
	eventually(t, "every Run to lead once the load stopped", func() bool {
		for i := range terms {
			if terms[i].Load() == 0 {
				return false
			}
		}
		return true
	})
	cancel()
	for range runs {
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v after its context ended, want context.Canceled", err)
		}
	}
	for _, p := range paths {
		eventually(t, "no znode left under "+p+" after Run resigned", func() bool {
			names, _, err := s.Children(t.Context(), p) // itself throttled at times
			return errors.Is(err, zk.ErrNoNode) || (err == nil && len(names) == 0)
		})
	}
	t.Logf("%d throttled reads", throttled.Load())
}
