package partition

import (
	"testing"
	"time"
)

// TestPublishGapFollowsTheWriteCost: record writes are at least
// publishInterval apart, ten times the slowest recent write apart when
// writes are slow, never more than maxPublishGap, and the gap shrinks back
// to publishInterval as writes get fast again.
func TestPublishGapFollowsTheWriteCost(t *testing.T) {
	p := &publisher{}
	for _, c := range []struct {
		write time.Duration
		want  time.Duration
	}{
		{2 * time.Millisecond, publishInterval},
		{20 * time.Millisecond, 200 * time.Millisecond},
		{400 * time.Millisecond, maxPublishGap},
	} {
		p.observeWrite(c.write)
		if got := p.gap(); got != c.want {
			t.Errorf("after a write of %v: gap %v, want %v", c.write, got, c.want)
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
	if last != publishInterval {
		t.Errorf("after many fast writes: gap %v, want %v", last, publishInterval)
	}
}
