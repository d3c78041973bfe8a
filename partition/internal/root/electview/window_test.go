package electview

import (
	"testing"
	"time"
)

func TestWindowGrowsOnPromptAnswersAndHalvesOnLateOnes(t *testing.T) {
	w := newWindow(func() time.Duration { return 1600 * time.Millisecond }) // prompt < 100ms, late > 200ms
	now := time.Unix(1000, 0)
	for range 100 {
		w.answered(10*time.Millisecond, now)
	}
	if w.limit != windowMax {
		t.Fatalf("after 100 prompt answers the window is %d, want %d", w.limit, windowMax)
	}
	w.answered(150*time.Millisecond, now) // neither prompt nor late
	if w.limit != windowMax {
		t.Fatalf("an answer between a sixteenth and an eighth changed the window to %d", w.limit)
	}
	w.answered(300*time.Millisecond, now)
	w.answered(300*time.Millisecond, now.Add(time.Millisecond)) // within the same round trip: one cut
	if w.limit != windowMax/2 {
		t.Fatalf("after late answers within one round trip the window is %d, want %d", w.limit, windowMax/2)
	}
	for i := range 10 {
		w.answered(300*time.Millisecond, now.Add(time.Duration(i+1)*time.Second))
	}
	if w.limit != windowMin {
		t.Fatalf("after many late answers the window is %d, want the least, %d", w.limit, windowMin)
	}
}
