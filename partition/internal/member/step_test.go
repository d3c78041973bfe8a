package member

import (
	"reflect"
	"testing"
	"time"
)

// TestStep: (state, now) → plan: a step decides only when the state
// changed and its gap is over, reconciles only once the startup wait is
// over, ends reservations, unseated marks and a freeze whose time is
// over, and wakes at the earliest deadline it knows.
func TestStep(t *testing.T) {
	t0 := time.Unix(1000, 0)
	settle := 3 * time.Second
	tests := []struct {
		name  string
		setup func(c *Core[int])
		at    time.Duration // the step's time after t0
		facts Facts         // Now is set from at
		want  Plan
		dirty bool // Steps.Dirty after the step (a Decide clears nothing: the decide stage does)
	}{
		{
			name: "nothing changed: nothing to do",
			want: Plan{},
		},
		{
			name:  "changed during the startup wait: decides, does not reconcile, wakes when it may end",
			setup: func(c *Core[int]) { c.Steps.Dirty = true; c.Startup.MembersChanged(t0) },
			at:    time.Second,
			want:  Plan{Decide: true, WakeIn: 2 * time.Second},
			dirty: true,
		},
		{
			name:  "the expected members live: the startup wait ends",
			setup: func(c *Core[int]) { c.Steps.Dirty = true; c.Startup.MembersChanged(t0) },
			at:    time.Second,
			facts: Facts{ExpectedLive: true},
			want:  Plan{Decide: true, Reconcile: true},
			dirty: true,
		},
		{
			name:  "settled: reconciles",
			setup: func(c *Core[int]) { c.Steps.Stale = true },
			at:    settle,
			want:  Plan{Decide: true, Reconcile: true},
		},
		{
			name:  "the membership changed lately: the wait goes on",
			setup: func(c *Core[int]) { c.Steps.Stale = true; c.Startup.MembersChanged(t0.Add(2 * time.Second)) },
			at:    settle,
			want:  Plan{Decide: true, WakeIn: 2 * time.Second},
		},
		{
			name: "a reservation over: ended, the record and the assignment follow",
			setup: func(c *Core[int]) {
				c.Grace.Reserve("1", t0, t0.Add(time.Second))
				c.Grace.Reserve("2", t0, t0.Add(time.Minute))
			},
			at:    10 * time.Second,
			want:  Plan{Decide: true, Reconcile: true, RecordChanged: true, WakeIn: 50 * time.Second},
			dirty: true,
		},
		{
			name:  "an unseated mark over: ended",
			setup: func(c *Core[int]) { c.Unseated.Mark("1", t0.Add(time.Second)) },
			at:    10 * time.Second,
			want:  Plan{Decide: true, Reconcile: true, RecordChanged: true},
			dirty: true,
		},
		{
			name:  "a freeze that lifted itself: decides again",
			setup: func(c *Core[int]) { c.Freeze.Honoured(true, t0.Add(time.Second)) },
			at:    10 * time.Second,
			want:  Plan{Decide: true, Reconcile: true},
			dirty: true,
		},
		{
			name: "within the step gap: put off, woken when it may run",
			setup: func(c *Core[int]) {
				c.Steps.Dirty = true
				c.Steps.Pace(t0.Add(10 * time.Second))
				c.Steps.NoteCost(10*time.Millisecond, true)
			},
			at:    10*time.Second + 40*time.Millisecond,
			want:  Plan{WakeIn: 60 * time.Millisecond},
			dirty: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[int](Config{RestartGrace: time.Minute, StartupSettle: settle, Started: t0})
			if tt.setup != nil {
				tt.setup(c)
			}
			f := tt.facts
			f.Now, f.SessionTimeout = t0.Add(tt.at), 2*time.Second
			if got := c.Step(f); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan %+v, want %+v", got, tt.want)
			}
			if c.Steps.Dirty != tt.dirty {
				t.Errorf("dirty %v, want %v", c.Steps.Dirty, tt.dirty)
			}
		})
	}
}
