package member

import (
	"slices"
	"testing"
	"time"
)

// TestHandoffThrottle: at most SuccessorChecksPerSlot times limit
// handoffs are asked at once (their successor checks run ahead; the
// runners keep at most limit in transition); one that ends (done or given
// back) lets the next queued one go at once; queued entries no longer due
// are skipped without taking a slot.
func TestHandoffThrottle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	if SuccessorChecksPerSlot != 2 {
		t.Fatalf("the table below is written for 2 successor checks a slot, not %d", SuccessorChecksPerSlot)
	}
	tests := []struct {
		name      string
		limit     int
		queued    []string
		notDue    []string // ask refuses these
		inFlight  int      // before Next
		wantAsked []string
	}{
		{"under the limit", 1, []string{"a"}, nil, 0, []string{"a"}},
		{"checks ahead of the limit", 1, []string{"a", "b", "c"}, nil, 0, []string{"a", "b"}},
		{"limit 2", 2, []string{"a", "b", "c", "d", "e"}, nil, 0, []string{"a", "b", "c", "d"}},
		{"slots taken", 1, []string{"a", "b"}, nil, 1, []string{"a"}},
		{"full", 1, []string{"a"}, nil, 2, nil},
		{"entries no longer due skipped", 1, []string{"a", "b", "c", "d"}, []string{"a", "c"}, 0, []string{"b", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHandoffs()
			h.inFlight = tt.inFlight
			for _, s := range tt.queued {
				h.Queue(s)
			}
			var asked []string
			h.Next(tt.limit, func(s string) bool {
				if slices.Contains(tt.notDue, s) {
					return false
				}
				asked = append(asked, s)
				return true
			})
			if !slices.Equal(asked, tt.wantAsked) {
				t.Fatalf("asked %v, want %v", asked, tt.wantAsked)
			}
			if want := tt.inFlight + len(tt.wantAsked); h.InFlight() != want {
				t.Fatalf("in flight %d, want %d", h.InFlight(), want)
			}
			if bound := tt.limit * SuccessorChecksPerSlot; h.InFlight() > max(bound, tt.inFlight) {
				t.Fatalf("in flight %d above the bound %d", h.InFlight(), bound)
			}
		})
	}

	// A handoff that ends lets the next go at once; one given back settles again.
	h := NewHandoffs()
	for _, s := range []string{"a", "b", "c", "d"} {
		h.Queue(s)
	}
	ask := func(string) bool { return true }
	h.Next(1, ask)
	h.Ended("a", t0, false)
	h.Next(1, ask)
	if h.InFlight() != 2 || h.Queued() != 1 {
		t.Fatalf("after a handoff done: in flight %d, queued %d; want 2, 1", h.InFlight(), h.Queued())
	}
	h.Ended("b", t0, true)
	if h.InFlight() != 1 || !h.Settling() {
		t.Fatalf("after a handoff given back: in flight %d, settling %v; want 1, true", h.InFlight(), h.Settling())
	}
	if ok, _, wait := h.Settled("b", t0.Add(time.Millisecond), time.Second, false); ok || wait != time.Second-time.Millisecond {
		t.Fatalf("a handoff given back is settled again at once (ok %v, wait %v): it must settle again", ok, wait)
	}
}

// TestHandoffSettle: a shard led here and assigned elsewhere is handed
// off only after it stayed so for the settle delay (the first look begins
// the settle and asks a step for its end); a drained member's shards are
// settled at once; a shard assigned here again forgets its settle.
func TestHandoffSettle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const delay = 200 * time.Millisecond
	tests := []struct {
		name      string
		since     time.Duration // the settle began this long before now; negative: not begun
		drained   bool
		wantOK    bool
		wantBegun bool
		wantWait  time.Duration
	}{
		{"first look", -1, false, false, true, delay},
		{"within the delay", 50 * time.Millisecond, false, false, false, 150 * time.Millisecond},
		{"delay over", delay, false, true, false, 0},
		{"drained: at once", -1, true, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHandoffs()
			if tt.since >= 0 {
				h.Settled("s", t0.Add(-tt.since), delay, false)
			}
			ok, begun, wait := h.Settled("s", t0, delay, tt.drained)
			if ok != tt.wantOK || begun != tt.wantBegun || wait != tt.wantWait {
				t.Fatalf("Settled = %v, %v, %v; want %v, %v, %v", ok, begun, wait, tt.wantOK, tt.wantBegun, tt.wantWait)
			}
		})
	}
	h := NewHandoffs()
	h.Settled("s", t0, delay, false)
	h.Forget("s")
	if _, begun, _ := h.Settled("s", t0.Add(time.Hour), delay, false); !begun {
		t.Fatalf("a shard assigned here again and elsewhere later did not settle anew")
	}
}
