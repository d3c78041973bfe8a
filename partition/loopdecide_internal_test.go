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
		s.noteStepCost(c, true)
	}
	if want := stepCostFactor * 10 * time.Millisecond; s.stepGap != want {
		t.Fatalf("after one slow step among fast ones: gap %v, want %v", s.stepGap, want)
	}
	for range 2 {
		s.noteStepCost(300*time.Millisecond, true)
	}
	if want := min(stepCostFactor*300*time.Millisecond, maxStepGap); s.stepGap != want {
		t.Fatalf("after steps of 300 ms: gap %v, want %v", s.stepGap, want)
	}
	for range stepCostWindow {
		s.noteStepCost(time.Minute, true)
	}
	if s.stepGap != maxStepGap {
		t.Fatalf("after steps of a minute: gap %v, want %v", s.stepGap, maxStepGap)
	}
	s.noteStepCost(0, true)
	if s.stepGap != maxStepGap {
		t.Fatalf("one fast step among slow ones: gap %v, want %v still", s.stepGap, maxStepGap)
	}
}

// TestQuietStepsSpaceOut: each step in a row that changed nothing doubles
// the gap, up to maxQuietDoublings times and maxStepGap; a step that acts
// brings it back to its cost's; an urgent step runs after minStep and
// clears the count of quiet steps.
func TestQuietStepsSpaceOut(t *testing.T) {
	const cost = 10 * time.Millisecond
	base := stepCostFactor * cost
	var s stepState
	s.noteStepCost(cost, true)
	if s.stepGap != base {
		t.Fatalf("after a step that acted: gap %v, want %v", s.stepGap, base)
	}
	for i := 1; i <= maxQuietDoublings+2; i++ {
		s.noteStepCost(cost, false)
		if want := base << min(i, maxQuietDoublings); s.stepGap != want {
			t.Fatalf("after %d quiet steps: gap %v, want %v", i, s.stepGap, want)
		}
	}
	s.noteStepCost(cost, true)
	if s.stepGap != base {
		t.Fatalf("a step that acted after quiet ones: gap %v, want %v", s.stepGap, base)
	}
	// Steps of 100 ms: a gap of 1 s, then 2 s and 4 s, then the cap.
	s.noteStepCost(100*time.Millisecond, true)
	for range stepCostWindow {
		s.noteStepCost(100*time.Millisecond, true)
	}
	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, maxStepGap, maxStepGap} {
		s.noteStepCost(100*time.Millisecond, false)
		if s.stepGap != want || s.baseGap != time.Second {
			t.Fatalf("quiet step %d of 100 ms: gap %v (base %v), want %v (base 1s)", i+1, s.stepGap, s.baseGap, want)
		}
	}

	l := &loop{stepState: stepState{wake: stoppedTimer(), dirty: true, urgent: true, quiet: maxQuietDoublings,
		stepGap: maxStepGap, lastStep: time.Now().Add(-time.Second)}}
	defer l.wake.Stop()
	if ran := l.pace(); !ran || l.quiet != 0 {
		t.Fatalf("urgent step: ran %v, quiet %d after it; want it run and quiet 0", ran, l.quiet)
	}
}

// TestDueStepWaitsTheBaseGap: a step a timer or a runner asks for (due)
// waits the gap of its cost, not the quiet steps' longer one; a step that
// is only dirty waits the longer one.
func TestDueStepWaitsTheBaseGap(t *testing.T) {
	for _, due := range []bool{false, true} {
		l := &loop{stepState: stepState{wake: stoppedTimer(), dirty: true, due: due,
			baseGap: 100 * time.Millisecond, stepGap: maxStepGap, lastStep: time.Now().Add(-time.Second)}}
		if got := l.pace(); got != due {
			t.Errorf("due %v: pace() = %v, want %v", due, got, due)
		}
		if due && l.due {
			t.Errorf("due still set after the step it asked for")
		}
		l.wake.Stop()
	}
}

// TestTargetsMovedIgnoresShardsThatOnlyLeft: a shard dropped from the
// targets (its runner here finished) is no change to act on; one that is
// new or has another target is.
func TestTargetsMovedIgnoresShardsThatOnlyLeft(t *testing.T) {
	prev := map[string]string{"1": "b", "2": "a"}
	tests := []struct {
		name string
		next map[string]string
		want bool
	}{
		{"same", map[string]string{"1": "b", "2": "a"}, false},
		{"a handoff done", map[string]string{"2": "a"}, false},
		{"none left", map[string]string{}, false},
		{"a new shard", map[string]string{"1": "b", "2": "a", "3": "a"}, true},
		{"another target", map[string]string{"1": "c", "2": "a"}, true},
	}
	for _, tt := range tests {
		if got := targetsMoved(prev, tt.next); got != tt.want {
			t.Errorf("%s: targetsMoved = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPaceActsOnAnOperatorChangeAtOnce: a step put off by the step gap
// (seconds at 100,000 shards) runs minStep after the last one when an
// operator's change came (urgent), and the next one is paced again.
func TestPaceActsOnAnOperatorChangeAtOnce(t *testing.T) {
	tests := []struct {
		name   string
		urgent bool
		since  time.Duration // since the last step
		want   bool
	}{
		{"record change within the gap", false, 10 * minStep, false},
		{"operator change within the gap", true, 10 * minStep, true},
		{"operator change within minStep", true, 0, false},
		{"record change after the gap", false, time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &loop{stepState: stepState{wake: stoppedTimer(), dirty: true, urgent: tt.urgent,
				stepGap: maxStepGap, lastStep: time.Now().Add(-tt.since)}}
			defer l.wake.Stop()
			if got := l.pace(); got != tt.want {
				t.Fatalf("pace() = %v, want %v", got, tt.want)
			}
			if tt.want && l.urgent {
				t.Fatalf("urgent still set after the step it asked for")
			}
			if !tt.want && l.wakeAt.IsZero() {
				t.Fatalf("a step put off set no wake-up")
			}
		})
	}
}
