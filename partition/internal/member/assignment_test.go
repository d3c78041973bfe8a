package member

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// decideCase is a Core fed a fleet for Decide: me and b hold shards 0-3
// as holders says, me reserves reserved and leads leads, and runners run
// here for runs.
type decideCase struct {
	holders  map[string]string
	reserved []string
	leads    []string
	runs     []string
}

func (dc decideCase) core(t0 time.Time) *Core[int] {
	c := NewCore[int](Config{Me: "a", RestartGrace: time.Minute, Started: t0})
	c.Assign.Begin()
	c.Assign.SetShards([]string{"0", "1", "2", "3"})
	for s, m := range dc.holders {
		c.Assign.Hold(s, m, 1)
	}
	for _, s := range dc.reserved {
		c.Grace.ReserveFor(s, t0)
	}
	for _, s := range dc.leads {
		c.Leading.Start(s, 1, t0)
	}
	c.Steps.Dirty = true
	return c
}

func (dc decideCase) view(v View) View {
	if v.Params.Members == nil {
		v.Params.Members = []string{"a", "b"}
	}
	v.Runs = func(s string) bool { return slices.Contains(dc.runs, s) }
	v.Running = slices.Values(dc.runs)
	if v.VoidMove == nil {
		v.VoidMove = func(string) bool { return false }
	}
	return v
}

// TestDecide: (state, view, now) → plan and targets: nothing while the
// member is not live or the operator's state is unread; the targets are
// the shards assigned here and the targets of those run here; a shard
// this member publishes as unavailable goes elsewhere; a reservation
// dealt elsewhere is released (the record changes); a freeze that lifts
// itself wakes a step at its end; moves to this member that are done
// are cleared, and void ones only by the member with the smallest id,
// each once.
func TestDecide(t *testing.T) {
	t0 := time.Unix(1000, 0)
	live := View{SelfLive: true, OpRead: true}
	held := map[string]string{"0": "a", "1": "a", "2": "b", "3": "b"}
	tests := []struct {
		name        string
		state       decideCase
		view        View
		want        Plan
		wantTargets map[string]string
		wantActed   bool
		wantKept    []string // reservations left
	}{
		{
			name:  "not live: nothing computed",
			state: decideCase{holders: held},
			view:  View{OpRead: true},
		},
		{
			name:  "operator's state unread: nothing computed",
			state: decideCase{holders: held},
			view:  View{SelfLive: true},
		},
		{
			name:        "balanced: our shards, and the target of one we run",
			state:       decideCase{holders: held, runs: []string{"1", "2"}},
			view:        live,
			want:        Plan{Computed: true, Assigned: 2},
			wantTargets: map[string]string{"0": "a", "1": "a", "2": "b"},
			wantActed:   true,
		},
		{
			name:  "a shard we publish as unavailable goes elsewhere",
			state: decideCase{holders: held, runs: []string{"0"}},
			view: View{SelfLive: true, OpRead: true, Unavailable: map[string][]string{"a": {"0"}},
				Params: assign.Params{Members: []string{"a", "b"}}},
			want:        Plan{Computed: true, Assigned: 1},
			wantTargets: map[string]string{"0": "b", "1": "a"},
			wantActed:   true,
		},
		{
			name:        "a reservation dealt elsewhere is released",
			state:       decideCase{holders: map[string]string{"0": "a", "1": "a", "2": "b", "3": "b"}, reserved: []string{"1", "2"}},
			view:        live,
			want:        Plan{Computed: true, Assigned: 2, RecordChanged: true},
			wantTargets: map[string]string{"0": "a", "1": "a"},
			wantActed:   true,
			wantKept:    []string{"1"},
		},
		{
			name:  "a freeze that lifts itself: a wake at its end",
			state: decideCase{holders: held},
			view: View{SelfLive: true, OpRead: true, FreezeUntil: t0.Add(time.Minute),
				Params: assign.Params{Members: []string{"a", "b"}, Frozen: true}},
			want:        Plan{Computed: true, Assigned: 2, WakeIn: time.Minute},
			wantTargets: map[string]string{"0": "a", "1": "a"},
			wantActed:   true,
		},
		{
			name:  "a move to us that is done is cleared; a void one by the smallest id (us)",
			state: decideCase{holders: map[string]string{"0": "b", "1": "a", "2": "a", "3": "b"}, leads: []string{"2"}},
			view: View{SelfLive: true, OpRead: true,
				Moves:    map[string]string{"2": "a", "3": "gone"},
				VoidMove: func(s string) bool { return s == "3" },
				Params:   assign.Params{Members: []string{"a", "b"}, Pins: map[string]string{"2": "a", "3": "gone"}}},
			want: Plan{Computed: true, Assigned: 2, ClearMoves: []MoveClear{
				{To: "a", Shards: []string{"2"}}, {To: "gone", Shards: []string{"3"}},
			}},
			wantTargets: map[string]string{"1": "a", "2": "a"},
			wantActed:   true,
		},
		{
			name:  "void moves are left to the member with the smallest id",
			state: decideCase{holders: held},
			view: View{SelfLive: true, OpRead: true,
				Moves:    map[string]string{"3": "gone"},
				VoidMove: func(string) bool { return true },
				Params:   assign.Params{Members: []string{"0first", "a", "b"}, Pins: map[string]string{"3": "gone"}}},
			want:        Plan{Computed: true, Assigned: 2},
			wantTargets: map[string]string{"0": "a", "1": "a"},
			wantActed:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.state.core(t0)
			got := c.Decide(tt.state.view(tt.view), t0)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan %+v, want %+v", got, tt.want)
			}
			if !maps.Equal(c.Assign.Targets(), tt.wantTargets) {
				t.Errorf("targets %v, want %v", c.Assign.Targets(), tt.wantTargets)
			}
			if c.Steps.Acted != tt.wantActed || c.Steps.Dirty {
				t.Errorf("acted %v dirty %v, want acted %v, not dirty", c.Steps.Acted, c.Steps.Dirty, tt.wantActed)
			}
			if c.Steps.Stale != got.Computed {
				t.Errorf("stale %v after a plan computed %v: the runners lag a new assignment", c.Steps.Stale, got.Computed)
			}
			if kept := slices.Sorted(c.Grace.Reserved()); len(tt.state.reserved) > 0 && !slices.Equal(kept, tt.wantKept) {
				t.Errorf("reservations left %v, want %v", kept, tt.wantKept)
			}
		})
	}
}

// TestDecideClearsAMoveOnce: a move planned for clearing is not planned
// again by the next step while the operator's state is the same, and is
// again once it changed (a lost race is retried).
func TestDecideClearsAMoveOnce(t *testing.T) {
	t0 := time.Unix(1000, 0)
	dc := decideCase{holders: map[string]string{"0": "b", "1": "a", "2": "a", "3": "b"}, leads: []string{"2"}}
	c := dc.core(t0)
	v := dc.view(View{SelfLive: true, OpRead: true, Moves: map[string]string{"2": "a"},
		Params: assign.Params{Members: []string{"a", "b"}, Pins: map[string]string{"2": "a"}}})
	want := []MoveClear{{To: "a", Shards: []string{"2"}}}
	if got := c.Decide(v, t0).ClearMoves; !reflect.DeepEqual(got, want) {
		t.Fatalf("first step clears %v, want %v", got, want)
	}
	c.Steps.Dirty = true
	if got := c.Decide(v, t0).ClearMoves; got != nil {
		t.Fatalf("second step clears %v again, want nothing: the clear is under way", got)
	}
	c.Assign.OperatorChanged()
	c.Steps.Dirty = true
	if got := c.Decide(v, t0).ClearMoves; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the operator's state changed, clears %v, want %v again", got, want)
	}
}

// TestUnavailableFromMovesEqualsTheWholeMap checks Decide's path for
// unavailable shards against the whole-map one (DealUnavailable): over
// random fleets (holders, drains, pins, members publishing unavailable
// shards, the shards we run a runner for), the targets Decide keeps and
// their count equal concerningUs over DealUnavailable of the whole
// assignment.
func TestUnavailableFromMovesEqualsTheWholeMap(t *testing.T) {
	const me = "m1"
	t0 := time.Unix(1000, 0)
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 9))
		members := []string{"m0", "m1", "m2", "m3"}[:2+r.IntN(3)]
		shards := make([]string, 20+r.IntN(60))
		for i := range shards {
			shards[i] = strconv.Itoa(i)
		}
		c := NewCore[int](Config{Me: me, Started: t0})
		c.Assign.Begin()
		c.Assign.SetShards(shards)
		ref := assign.NewAssigner()
		ref.SetShards(shards)
		for _, s := range shards {
			if r.IntN(3) > 0 {
				m, tok := members[r.IntN(len(members))], uint64(r.IntN(100))
				c.Assign.Hold(s, m, tok)
				ref.Hold(s, m, tok)
			}
		}
		p := assign.Params{Members: members, Pins: map[string]string{}}
		if r.IntN(4) == 0 {
			p.Drained = []string{members[r.IntN(len(members))]}
		}
		if r.IntN(3) == 0 {
			p.Pins[shards[r.IntN(len(shards))]] = members[r.IntN(len(members))]
		}
		byMember := map[string][]string{}
		for range 1 + r.IntN(10) {
			m := members[r.IntN(len(members))]
			byMember[m] = append(byMember[m], shards[r.IntN(len(shards))])
		}
		runs := map[string]bool{}
		for _, s := range shards {
			if r.IntN(5) == 0 {
				runs[s] = true
			}
		}
		in := assign.Input{Members: p.Members, Drained: p.Drained, Pins: p.Pins, Current: map[string]string{}}
		for _, ss := range byMember {
			for _, s := range ss {
				if h := ref.Holder(s); h != "" {
					in.Current[s] = h
				}
			}
		}
		wantTargets, wantN := concerningUsRef(DealUnavailable(ref.Targets(p).All(), in, byMember), me, runs)

		c.Steps.Dirty = true
		plan := c.Decide(View{
			SelfLive: true, OpRead: true, Params: p, Unavailable: byMember,
			Runs: func(s string) bool { return runs[s] }, Running: maps.Keys(runs),
			VoidMove: func(string) bool { return false },
		}, t0)
		if got := c.Assign.Targets(); !maps.Equal(got, wantTargets) || plan.Assigned != wantN {
			t.Fatalf("seed %d: Decide kept %v (%d ours), from the whole map %v (%d ours)", seed, got, plan.Assigned, wantTargets, wantN)
		}
	}
}

// concerningUsRef is concerningUs over a whole assignment: the shards
// targeted to me, and those a runner runs for with their targets.
func concerningUsRef(all map[string]string, me string, runs map[string]bool) (map[string]string, int) {
	out, n := map[string]string{}, 0
	for s, m := range all {
		switch {
		case m == me:
			n++
			out[s] = m
		case runs[s]:
			out[s] = m
		}
	}
	return out, n
}

// TestWithMoves is withMoves on each case: a shard moved to us, one
// moved away from us that we run (kept with its new target) or do not
// (dropped), one moved between others that we run or not.
func TestWithMoves(t *testing.T) {
	targets := map[string]string{"ours": "me", "oursRun": "me", "othersRun": "b"}
	moved := map[string]string{"toUs": "me", "ours": "b", "oursRun": "c", "othersRun": "c", "others": "c"}
	runs := map[string]bool{"oursRun": true, "othersRun": true}
	n := withMoves(targets, 2, moved, "me", func(s string) bool { return runs[s] })
	want := map[string]string{"toUs": "me", "oursRun": "c", "othersRun": "c"}
	if !maps.Equal(targets, want) || n != 1 {
		t.Fatalf("withMoves gave %v, %d ours; want %v, 1", targets, n, want)
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
