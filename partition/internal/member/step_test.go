package member

import (
	"reflect"
	"testing"
	"time"
)

// TestStep: (state, now) → plan: a step decides only when the state
// changed and its gap is over, ends reservations, unseated marks and a
// freeze whose time is over, and wakes at the earliest deadline it knows.
func TestStep(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name  string
		setup func(c *Core[int])
		at    time.Duration // the step's time after t0
		want  Plan
		dirty bool // Steps.Dirty after the step (the decide stage clears it)
	}{
		{
			name: "nothing changed: nothing to do",
			want: Plan{},
		},
		{
			name:  "changed: decides",
			setup: func(c *Core[int]) { c.Steps.Dirty = true },
			want:  Plan{Decide: true},
			dirty: true,
		},
		{
			name: "a reservation over: ended, the record and the assignment follow",
			setup: func(c *Core[int]) {
				c.Grace.Reserve("1", t0, t0.Add(time.Second))
				c.Grace.Reserve("2", t0, t0.Add(time.Minute))
			},
			at:    10 * time.Second,
			want:  Plan{Decide: true, RecordChanged: true, WakeIn: 50 * time.Second},
			dirty: true,
		},
		{
			name:  "an unseated mark over: ended",
			setup: func(c *Core[int]) { c.Unseated.Mark("1", t0.Add(time.Second)) },
			at:    10 * time.Second,
			want:  Plan{Decide: true, RecordChanged: true},
			dirty: true,
		},
		{
			name:  "a freeze that lifted itself: decides again",
			setup: func(c *Core[int]) { c.Freeze.Honoured(true, t0.Add(time.Second)) },
			at:    10 * time.Second,
			want:  Plan{Decide: true},
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
			c := NewCore[int](Config{RestartGrace: time.Minute, StartupSettle: time.Second, Started: t0})
			if tt.setup != nil {
				tt.setup(c)
			}
			if got := c.Step(Facts{Now: t0.Add(tt.at), SessionTimeout: 2 * time.Second}); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan %+v, want %+v", got, tt.want)
			}
			if c.Steps.Dirty != tt.dirty {
				t.Errorf("dirty %v, want %v", c.Steps.Dirty, tt.dirty)
			}
		})
	}
}

// TestReconcileDue: the runners are reconciled only when they lag the
// assignment and the startup wait is over: the expected members live,
// the membership unchanged for the settle time, or the cap passed; the
// wait is not looked at while the runners do not lag (before the first
// assignment, which needs the live members read).
func TestReconcileDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	settle := 3 * time.Second
	tests := []struct {
		name     string
		stale    bool
		changed  []time.Duration // the live members changed at these times after t0
		at       time.Duration
		expected bool // Facts.ExpectedLive
		want     Plan
		done     bool // the startup wait over after
	}{
		{"not stale: nothing, the wait not looked at", false, nil, time.Hour, false, Plan{}, false},
		{"during the wait: no reconcile, woken when it may end", true, []time.Duration{0}, time.Second, false, Plan{WakeIn: 2 * time.Second}, false},
		{"the expected members live: the wait ends", true, []time.Duration{0}, time.Second, true, Plan{Reconcile: true}, true},
		{"settled: reconciles", true, []time.Duration{0}, settle, false, Plan{Reconcile: true}, true},
		{"the membership changed lately: the wait goes on", true, []time.Duration{0, 2 * time.Second}, settle, false, Plan{WakeIn: 2 * time.Second}, false},
		{"the cap passed: reconciles", true, []time.Duration{0, 10 * time.Second}, StartupSettleCap * settle, false, Plan{Reconcile: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[int](Config{StartupSettle: settle, Started: t0})
			for _, at := range tt.changed {
				c.Startup.MembersChanged(t0.Add(at))
			}
			c.Steps.Stale = tt.stale
			if got := c.ReconcileDue(Facts{Now: t0.Add(tt.at), ExpectedLive: tt.expected}); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan %+v, want %+v", got, tt.want)
			}
			if c.Startup.Done() != tt.done {
				t.Errorf("startup wait over: %v, want %v", c.Startup.Done(), tt.done)
			}
		})
	}
}
