package member

import (
	"testing"
	"time"
)

// TestStepGapIgnoresOneSlowStep: the gap between steps follows the
// recent steps' typical cost, not one slow step (a collection of a large
// heap put the next step off by ten times its cost), and backs off when
// steps stay expensive, up to MaxStepGap.
func TestStepGapIgnoresOneSlowStep(t *testing.T) {
	var s Steps
	for _, c := range []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 5 * time.Second} {
		s.NoteCost(c, true)
	}
	if want := stepCostFactor * 10 * time.Millisecond; s.stepGap != want {
		t.Fatalf("after one slow step among fast ones: gap %v, want %v", s.stepGap, want)
	}
	for range 2 {
		s.NoteCost(300*time.Millisecond, true)
	}
	if want := min(stepCostFactor*300*time.Millisecond, MaxStepGap); s.stepGap != want {
		t.Fatalf("after steps of 300 ms: gap %v, want %v", s.stepGap, want)
	}
	for range stepCostWindow {
		s.NoteCost(time.Minute, true)
	}
	if s.stepGap != MaxStepGap {
		t.Fatalf("after steps of a minute: gap %v, want %v", s.stepGap, MaxStepGap)
	}
	s.NoteCost(0, true)
	if s.stepGap != MaxStepGap {
		t.Fatalf("one fast step among slow ones: gap %v, want %v still", s.stepGap, MaxStepGap)
	}
}

// TestQuietStepsSpaceOut: each step in a row that changed nothing doubles
// the gap, up to maxQuietDoublings times and MaxStepGap; a step that acts
// brings it back to its cost's.
func TestQuietStepsSpaceOut(t *testing.T) {
	const cost = 10 * time.Millisecond
	base := stepCostFactor * cost
	var s Steps
	s.NoteCost(cost, true)
	if s.stepGap != base {
		t.Fatalf("after a step that acted: gap %v, want %v", s.stepGap, base)
	}
	for i := 1; i <= maxQuietDoublings+2; i++ {
		s.NoteCost(cost, false)
		if want := base << min(i, maxQuietDoublings); s.stepGap != want {
			t.Fatalf("after %d quiet steps: gap %v, want %v", i, s.stepGap, want)
		}
	}
	s.NoteCost(cost, true)
	if s.stepGap != base {
		t.Fatalf("a step that acted after quiet ones: gap %v, want %v", s.stepGap, base)
	}
	// Steps of 100 ms: a gap of 1 s, then 2 s and 4 s, then the cap.
	for range stepCostWindow + 1 {
		s.NoteCost(100*time.Millisecond, true)
	}
	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, MaxStepGap, MaxStepGap} {
		s.NoteCost(100*time.Millisecond, false)
		if s.stepGap != want || s.baseGap != time.Second {
			t.Fatalf("quiet step %d of 100 ms: gap %v (base %v), want %v (base 1s)", i+1, s.stepGap, s.baseGap, want)
		}
	}
}

// TestPace: a step runs only when something changed, at most once per
// step gap; an operator's change or the live members' (Urgent) runs
// MinStep after the last step and clears the quiet count; a step a timer
// or a runner asks for (Due) waits the gap of its cost, not the quiet
// steps' longer one. A step put off says how long until it may run, and
// a step that runs clears Urgent and Due.
func TestPace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name     string
		s        Steps
		since    time.Duration // from the last step to now
		wantRun  bool
		wantWait time.Duration
	}{
		{"nothing changed", Steps{stepGap: time.Second}, time.Hour, false, 0},
		{"dirty within the gap", Steps{Dirty: true, stepGap: time.Second}, 300 * time.Millisecond, false, 700 * time.Millisecond},
		{"dirty after the gap", Steps{Dirty: true, stepGap: time.Second}, time.Second, true, 0},
		{"stale runners after the gap", Steps{Stale: true, stepGap: time.Second}, 2 * time.Second, true, 0},
		{"operator change within the gap", Steps{Dirty: true, Urgent: true, stepGap: MaxStepGap, quiet: maxQuietDoublings}, 10 * MinStep, true, 0},
		{"operator change within MinStep", Steps{Dirty: true, Urgent: true, stepGap: MaxStepGap}, MinStep / 2, false, MinStep / 2},
		{"due after the base gap, within the quiet gap", Steps{Dirty: true, Due: true, baseGap: 100 * time.Millisecond, stepGap: MaxStepGap}, time.Second, true, 0},
		{"only dirty within the quiet gap", Steps{Dirty: true, baseGap: 100 * time.Millisecond, stepGap: MaxStepGap}, time.Second, false, MaxStepGap - time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			s.lastStep = t0
			now := t0.Add(tt.since)
			run, wait := s.Pace(now)
			if run != tt.wantRun || wait != tt.wantWait {
				t.Fatalf("Pace = %v, %v; want %v, %v", run, wait, tt.wantRun, tt.wantWait)
			}
			switch {
			case run && (s.Urgent || s.Due):
				t.Fatalf("Urgent %v, Due %v still set after the step they asked for", s.Urgent, s.Due)
			case run && tt.s.Urgent && s.quiet != 0:
				t.Fatalf("quiet %d after an urgent step, want 0", s.quiet)
			case run && !s.lastStep.Equal(now):
				t.Fatalf("last step %v, want now", s.lastStep)
			case !run && !s.lastStep.Equal(t0):
				t.Fatalf("a step put off moved the last step")
			}
		})
	}
}
