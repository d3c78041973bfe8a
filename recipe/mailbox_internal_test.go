package recipe

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMailboxLosesNoWakeupAndNeverOverlaps: posters race with a drain that
// finds the mailbox empty; every message is handled, exactly once, and
// never two drains at once.
func TestMailboxLosesNoWakeupAndNeverOverlaps(t *testing.T) {
	var running, overlap atomic.Int32
	var got atomic.Int64
	var b *mailbox
	b = newMailbox(func() {
		for {
			msgs := b.take()
			if msgs == nil {
				return
			}
			// Handling (the loop's state) must never overlap another drain's.
			if running.Add(1) > 1 {
				overlap.Add(1)
			}
			got.Add(int64(len(msgs)))
			running.Add(-1)
		}
	})
	b.open()
	const posters, each = 8, 20000
	var wg sync.WaitGroup
	for range posters {
		wg.Go(func() {
			for i := range each {
				b.post(i)
				if i%64 == 0 {
					time.Sleep(time.Microsecond)
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for got.Load() != posters*each && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got.Load() != posters*each || overlap.Load() != 0 {
		t.Fatalf("handled %d of %d messages, %d overlapping drains", got.Load(), posters*each, overlap.Load())
	}
}
