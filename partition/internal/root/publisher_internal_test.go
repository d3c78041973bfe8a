package root

import (
	"testing"
	"time"
)

// TestPublishGapFollowsTheWriteCost: a small record is written
// PublishInterval after the last write, however slow writes are; a large
// one ten times the slowest recent write apart when writes are slow, never
// more than maxPublishGap, and the gap shrinks back to PublishInterval as
// writes get fast again.
func TestPublishGapFollowsTheWriteCost(t *testing.T) {
	p := &Publisher{}
	p.observeWrite(400 * time.Millisecond)
	if got := p.gap(); got != PublishInterval {
		t.Errorf("a small record after a slow write: gap %v, want %v", got, PublishInterval)
	}
	p = &Publisher{}
	p.size.Store(smallRecord + 1)
	for _, c := range []struct {
		write time.Duration
		want  time.Duration
	}{
		{2 * time.Millisecond, PublishInterval},
		{20 * time.Millisecond, 200 * time.Millisecond},
		{400 * time.Millisecond, maxPublishGap},
	} {
		p.observeWrite(c.write)
		if got := p.gap(); got != c.want {
			t.Errorf("a large record after a write of %v: gap %v, want %v", c.write, got, c.want)
		}
	}
	last := p.gap()
	for range 64 {
		p.observeWrite(time.Millisecond)
		if got := p.gap(); got > last {
			t.Fatalf("a fast write widened the gap from %v to %v", last, got)
		}
		last = p.gap()
	}
	if last != PublishInterval {
		t.Errorf("after many fast writes: gap %v, want %v", last, PublishInterval)
	}
}

// TestPublisherTakesANewerRecordWhileRetrying: while a write is under way
// the loop waits for its end; while the writer retries a failed one it
// takes a newer record at once (the one retried is outdated); otherwise
// the next record waits out the gap after the last write.
func TestPublisherTakesANewerRecordWhileRetrying(t *testing.T) {
	now := time.Now()
	p := &Publisher{}
	if got := p.ReadyIn(now); got != 0 {
		t.Errorf("idle publisher: readyIn %v, want 0", got)
	}
	p.nextAt.Store(now.Add(30 * time.Millisecond).UnixNano())
	if got := p.ReadyIn(now); got != 30*time.Millisecond {
		t.Errorf("within the gap: readyIn %v, want 30ms", got)
	}
	p.busy.Store(true)
	if got := p.ReadyIn(now); got >= 0 {
		t.Errorf("a write under way: readyIn %v, want negative (wait for idle)", got)
	}
	p.failing.Store(true)
	if got := p.ReadyIn(now); got != 0 {
		t.Errorf("a write being retried: readyIn %v, want 0", got)
	}
}
