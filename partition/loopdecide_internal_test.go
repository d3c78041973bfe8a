package partition

import (
	"testing"
	"time"
)

// TestStepGapIgnoresOneSlowStep: the gap between steps follows the
// recent steps' typical cost, not one slow step (a collection of a large
// heap put the next step off by ten times its cost), and backs off when
// steps stay expensive, up to maxStepGap.
func TestStepGapIgnoresOneSlowStep(t *testing.T) {
	var s stepState
	for _, c := range []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 5 * time.Second} {
		s.noteStepCost(c)
	}
	if want := stepCostFactor * 10 * time.Millisecond; s.stepGap != want {
		t.Fatalf("after one slow step among fast ones: gap %v, want %v", s.stepGap, want)
	}
	for range 2 {
		s.noteStepCost(300 * time.Millisecond)
	}
	if want := min(stepCostFactor*300*time.Millisecond, maxStepGap); s.stepGap != want {
		t.Fatalf("after steps of 300 ms: gap %v, want %v", s.stepGap, want)
	}
	for range stepCostWindow {
		s.noteStepCost(time.Minute)
	}
	if s.stepGap != maxStepGap {
		t.Fatalf("after steps of a minute: gap %v, want %v", s.stepGap, maxStepGap)
	}
	s.noteStepCost(0)
	if s.stepGap != maxStepGap {
		t.Fatalf("one fast step among slow ones: gap %v, want %v still", s.stepGap, maxStepGap)
	}
}
