package member

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"
)

// coreState is a Core's state a Report table reads back: what the record
// claims and reserves, what is suspended, unavailable or unseated, and
// the handoffs in flight.
type coreState struct {
	leading     map[string]uint64
	reserved    []string
	suspended   []string
	unavailable []string
	unseated    []string
	inFlight    int
}

func stateOf(c *Core[int]) coreState {
	var susp []string
	for s := range c.Grace.suspended {
		susp = append(susp, s)
	}
	slices.Sort(susp)
	return coreState{
		leading: maps.Clone(c.Leading.Map()), reserved: slices.Sorted(c.Grace.Reserved()), suspended: susp,
		unavailable: c.Unavail.List(), unseated: slices.Sorted(maps.Keys(c.Unseated)), inFlight: c.Handoffs.InFlight(),
	}
}

func sameState(a, b coreState) bool {
	return maps.Equal(a.leading, b.leading) && slices.Equal(a.reserved, b.reserved) &&
		slices.Equal(a.suspended, b.suspended) && slices.Equal(a.unavailable, b.unavailable) &&
		slices.Equal(a.unseated, b.unseated) && a.inFlight == b.inFlight
}

// TestReport: (state, events, now) → state and effects, for each kind of
// runner event.
func TestReport(t *testing.T) {
	t0 := time.Unix(1000, 0)
	f := func(d time.Duration) Facts { return Facts{Now: t0.Add(d), SessionTimeout: 2 * time.Second} }
	const seat = 1
	tests := []struct {
		name   string
		setup  func(c *Core[int])
		events []Event
		at     time.Duration // the last event's time after t0 (the earlier ones at t0)
		want   coreState
		eff    Plan   // of the last event
		steps  string // the Steps flags set: d(irty), s(tale), u (due)
	}{
		{
			name: "started: claimed, reservation and unavailability end",
			setup: func(c *Core[int]) {
				c.Grace.ReserveFor("1", t0)
				c.Unavail.Mark("1", seat)
				c.Unseated.Mark("1", t0.Add(time.Hour))
			},
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}},
			want:   coreState{leading: map[string]uint64{"1": 7}},
		},
		{
			name:   "started after a failover: its duration observed once",
			setup:  func(c *Core[int]) { c.Orphan("1", t0) },
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}},
			at:     3 * time.Second,
			want:   coreState{leading: map[string]uint64{"1": 7}},
			eff:    Plan{Failover: 3 * time.Second},
		},
		{
			name:   "a failover led elsewhere first is not ours to time",
			setup:  func(c *Core[int]) { c.Orphan("1", t0); c.LedElsewhere(map[string]uint64{"1": 5}) },
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}},
			at:     3 * time.Second,
			want:   coreState{leading: map[string]uint64{"1": 7}},
		},
		{
			name:   "an orphan older than OrphanedTTL is not measured",
			setup:  func(c *Core[int]) { c.Orphan("1", t0); c.ExpireOrphans(t0.Add(OrphanedTTL + time.Second)) },
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}},
			want:   coreState{leading: map[string]uint64{"1": 7}},
		},
		{
			name:   "stopped by an expiry: reserved, the record marked",
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}, {Shard: "1", Kind: RunnerStopped, Expired: true}},
			want:   coreState{reserved: []string{"1"}},
			eff:    Plan{RecordChanged: true},
		},
		{
			name:   "stopped for another reason: nothing reserved",
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}, {Shard: "1", Kind: RunnerStopped}},
			want:   coreState{},
		},
		{
			name:   "stopped by an expiry while unavailable: dealt elsewhere, nothing reserved",
			setup:  func(c *Core[int]) { c.Unavail.Mark("1", seat) },
			events: []Event{{Shard: "1", Kind: RunnerStopped, Expired: true}},
			want:   coreState{unavailable: []string{"1"}},
		},
		{
			name:   "suspended while led: the claim stays, suspended",
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}, {Shard: "1", Kind: RunnerSuspended}},
			want:   coreState{leading: map[string]uint64{"1": 7}, suspended: []string{"1"}},
		},
		{
			name:   "suspended when not led: nothing to keep",
			events: []Event{{Shard: "1", Kind: RunnerSuspended}},
			want:   coreState{},
		},
		{
			name:   "unseated: unavailable for UnseatedFor session timeouts, its reservation ends",
			setup:  func(c *Core[int]) { c.Grace.ReserveFor("1", t0) },
			events: []Event{{Shard: "1", Kind: RunnerUnseated}},
			want:   coreState{unseated: []string{"1"}},
			eff:    Plan{RecordChanged: true, WakeIn: UnseatedFor * 2 * time.Second},
			steps:  "d",
		},
		{
			name:   "unseated while led: left alone",
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}, {Shard: "1", Kind: RunnerUnseated}},
			want:   coreState{leading: map[string]uint64{"1": 7}},
		},
		{
			name:   "a handoff deferred: out of flight, counted, reconciled",
			setup:  func(c *Core[int]) { c.Handoffs.Queue("1"); c.Handoffs.Next(1, func(string) bool { return true }) },
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}, {Shard: "1", Kind: RunnerDeferred, Handoff: true}},
			want:   coreState{leading: map[string]uint64{"1": 7}},
			eff:    Plan{HandoffDeferred: true},
			steps:  "s",
		},
		{
			name:   "a withdrawal dropped: reconciled, no handoff counted",
			events: []Event{{Shard: "1", Kind: RunnerDeferred}},
			want:   coreState{},
			steps:  "s",
		},
		{
			name:  "a handoff finished: its duration, the claim ends",
			setup: func(c *Core[int]) { c.Handoffs.Queue("1"); c.Handoffs.Next(1, func(string) bool { return true }) },
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7},
				{Shard: "1", Kind: RunnerFinished, Handoff: true, AskedAt: t0.Add(time.Second)}},
			at:    4 * time.Second,
			want:  coreState{},
			eff:   Plan{HandoffDone: true, Handoff: 3 * time.Second},
			steps: "s",
		},
		{
			name:   "a suspended claim withdrawn when its runner finishes",
			events: []Event{{Shard: "1", Kind: RunnerStarted, Token: 7}, {Shard: "1", Kind: RunnerSuspended}, {Shard: "1", Kind: RunnerFinished}},
			want:   coreState{},
			steps:  "s",
		},
		{
			name:   "a removed shard's runner finished: its election deleted",
			events: []Event{{Shard: "1", Kind: RunnerFinished, Removed: true}},
			want:   coreState{},
			eff:    Plan{DeleteElection: "1"},
			steps:  "s",
		},
		{
			name:   "finished while still assigned here: a step is due to start it again",
			setup:  func(c *Core[int]) { c.Assign.SetTargets(map[string]string{"1": "me"}) },
			events: []Event{{Shard: "1", Kind: RunnerFinished}},
			want:   coreState{},
			steps:  "su",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[int](Config{Me: "me", RestartGrace: time.Minute})
			if tt.setup != nil {
				tt.setup(c)
			}
			var eff Plan
			for i, ev := range tt.events {
				at := time.Duration(0)
				if i == len(tt.events)-1 {
					at = tt.at
				}
				eff = c.Report(ev, f(at))
			}
			if got := stateOf(c); !sameState(got, tt.want) {
				t.Errorf("state %+v, want %+v", got, tt.want)
			}
			if !reflect.DeepEqual(eff, tt.eff) {
				t.Errorf("plan %+v, want %+v", eff, tt.eff)
			}
			steps := ""
			for _, f := range []struct {
				set  bool
				flag string
			}{{c.Steps.Dirty, "d"}, {c.Steps.Stale, "s"}, {c.Steps.Due, "u"}} {
				if f.set {
					steps += f.flag
				}
			}
			if steps != tt.steps {
				t.Errorf("steps flags %q, want %q", steps, tt.steps)
			}
		})
	}
}

// TestMarkUnavailable: shards on a down seat that are not led here (a
// suspended claim is not led) are marked and their claims end; a shard
// led here is left; a shard marked once is not marked again.
func TestMarkUnavailable(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := NewCore[int](Config{RestartGrace: time.Minute})
	c.Leading.Start("led", 1, t0)
	c.Leading.Start("susp", 2, t0)
	c.Grace.Suspend("susp", t0)
	c.Grace.ReserveFor("res", t0)
	if !c.MarkUnavailable([]string{"led", "susp", "res", "other"}, 1, t0) {
		t.Fatal("MarkUnavailable marked nothing")
	}
	want := coreState{leading: map[string]uint64{"led": 1}, unavailable: []string{"other", "res", "susp"}}
	if got := stateOf(c); !sameState(got, want) {
		t.Fatalf("state %+v, want %+v", got, want)
	}
	if c.MarkUnavailable([]string{"susp", "res", "other"}, 1, t0) {
		t.Fatal("MarkUnavailable marked shards marked already")
	}
}
