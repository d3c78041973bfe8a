package partition_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
)

// TestThrottledRequestsNeverEndManagerRun: on a server that throttles
// requests under load (ZTHROTTLEDOP, -127: "retry"), two members' Run keep
// going while their context lives, and once the load stops every shard is
// led.
func TestThrottledRequestsNeverEndManagerRun(t *testing.T) {
	c := testenv.New(t, testenv.Options{SystemProperties: map[string]string{
		"zookeeper.request_throttle_max_requests": "1",
		"zookeeper.throttled_op_wait_time":        "5",
	}})
	loadCtx, stopLoad := context.WithCancel(t.Context())
	var throttled atomic.Int64
	var readers sync.WaitGroup
	defer readers.Wait()
	defer stopLoad()
	for range 32 {
		s := connectTo(t, c.Addrs(), 2*time.Second)
		readers.Go(func() {
			for loadCtx.Err() == nil {
				if err := s.Sync(loadCtx, "/"); err != nil && strings.Contains(err.Error(), "THROTTLEDOP") {
					throttled.Add(1)
				}
			}
		})
	}
	root := newRoot(t)
	shards := partition.Range(0, 50)
	tr := newTracker()
	var ms []*member
	for _, id := range []string{"a", "b"} {
		ms = append(ms, startMemberOn(t, connectTo(t, c.Addrs(), 2*time.Second), root, id, shards, tr))
	}
	deadline := time.After(4 * time.Second)
	for waiting := true; waiting; {
		select {
		case <-ms[0].ended:
			t.Fatalf("member a's Run returned %v while its context lived", <-ms[0].done)
		case <-ms[1].ended:
			t.Fatalf("member b's Run returned %v while its context lived", <-ms[1].done)
		case <-deadline:
			waiting = false
		}
	}
	if throttled.Load() == 0 {
		t.Fatal("the server throttled no read: the test proves nothing")
	}
	stopLoad()
	// Both members take part once the load stopped (a member still
	// retrying its registration when the test ends would return ctx's
	// error from Run, which stop reports).
	waitFor(t, time.Minute, "every shard led by both members once the load stopped", func() (bool, string) {
		lead := leaders(t, ms)
		by := map[string]int{}
		for _, m := range lead {
			by[m]++
		}
		return len(lead) == len(shards) && by["a"] > 0 && by["b"] > 0,
			fmt.Sprintf("%d of %d shards led (%v)", len(lead), len(shards), by)
	})
	t.Logf("%d throttled reads", throttled.Load())
}
