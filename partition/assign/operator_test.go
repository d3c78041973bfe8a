package assign_test

import (
	"maps"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
)

// TestAssignWeightsGiveProportionalShares: weights 1:2:3 over 600 shards
// give 100/200/300, from a cold start and from an equal-weight steady
// state; changing a weight then moves only the shards it must.
func TestAssignWeightsGiveProportionalShares(t *testing.T) {
	shards, ms := shardRange(0, 600), members(3)
	weights := map[string]int{"m0": 1, "m1": 2, "m2": 3}
	want := map[string]int{"m0": 100, "m1": 200, "m2": 300}
	cold := assign.Assign(assign.Input{Shards: shards, Members: ms, Weights: weights})
	if got := loads(cold); !maps.Equal(got, want) {
		t.Fatalf("cold start with weights 1:2:3: loads %v, want %v", got, want)
	}
	cur, tok := steadyState(shards, ms)
	warm := assign.Assign(assign.Input{Shards: shards, Members: ms, Current: cur, Tokens: tok, Weights: weights})
	if got := loads(warm); !maps.Equal(got, want) {
		t.Fatalf("weights 1:2:3 over an equal steady state: loads %v, want %v", got, want)
	}
	if n := moves(cur, warm); n != 100 { // m0 gives 100 to m2
		t.Fatalf("weights 1:1:1 to 1:2:3 moved %d shards, want 100", n)
	}
	weights["m0"] = 2 // 2:2:3 over 600: 172/171/257 or so; moves only m2's excess
	next := assign.Assign(assign.Input{Shards: shards, Members: ms, Current: warm, Weights: weights})
	l := loads(next)
	need := 0
	for m, n := range l {
		if n > want[m] {
			need += n - want[m]
		}
		if max := (600*weights[m] + 6) / 7; n > max {
			t.Fatalf("member %s leads %d, above ceil(600*%d/7) = %d", m, n, weights[m], max)
		}
	}
	if n := moves(warm, next); n != need {
		t.Fatalf("weight change moved %d shards, want the %d it must (loads %v)", n, need, l)
	}
}

// TestAssignDrainMovesOnlyTheDrainedMembersShards: draining a member of
// three over 1,000 shards moves exactly its shards; undraining gives it a
// share back taking only from the others' excess; draining every member
// drains none.
func TestAssignDrainMovesOnlyTheDrainedMembersShards(t *testing.T) {
	shards, ms := shardRange(0, 1000), members(3)
	cur, tok := steadyState(shards, ms)
	drained := assign.Assign(assign.Input{Shards: shards, Members: ms, Current: cur, Tokens: tok, Drained: []string{"m1"}})
	led := loads(cur)["m1"]
	if got := loads(drained)["m1"]; got != 0 {
		t.Fatalf("drained m1 still targeted %d shards", got)
	}
	if n := moves(cur, drained); n != led {
		t.Fatalf("drain moved %d shards, want exactly m1's %d", n, led)
	}
	back := assign.Assign(assign.Input{Shards: shards, Members: ms, Current: drained})
	if got := loads(back)["m1"]; got != 333 && got != 334 {
		t.Fatalf("undrained m1 targeted %d shards, want its share 333..334", got)
	}
	if n := moves(drained, back); n != loads(back)["m1"] {
		t.Fatalf("undrain moved %d shards, want only the %d m1 takes", n, loads(back)["m1"])
	}
	all := assign.Assign(assign.Input{Shards: shards, Members: ms, Current: cur, Tokens: tok, Drained: ms})
	if !maps.Equal(all, assign.Assign(assign.Input{Shards: shards, Members: ms, Current: cur, Tokens: tok})) {
		t.Fatal("draining every member changed the assignment: the drains should be ignored")
	}
}

// TestAssignFrozenKeepsHoldersAndDealsOrphans: while frozen, a joining
// member takes nothing from the others, yet the shards of a member that
// left are dealt at once.
func TestAssignFrozenKeepsHoldersAndDealsOrphans(t *testing.T) {
	shards := shardRange(0, 300)
	cur, tok := steadyState(shards, members(3))
	joined := assign.Assign(assign.Input{Shards: shards, Members: members(4), Current: cur, Tokens: tok, Frozen: true})
	if n := moves(cur, joined); n != 0 {
		t.Fatalf("frozen: a join moved %d shards, want 0", n)
	}
	left := assign.Assign(assign.Input{Shards: shards, Members: []string{"m0", "m2", "m3"}, Current: cur, Tokens: tok, Frozen: true})
	for s, m := range cur {
		if m == "m1" && left[s] == "" {
			t.Fatalf("frozen: shard %s of the departed m1 has no target", s)
		}
		if m != "m1" && left[s] != m {
			t.Fatalf("frozen: shard %s moved from %s to %s", s, m, left[s])
		}
	}
	if got := loads(left)["m3"]; got != 100 { // 75 with room, the rest as the least loaded
		t.Fatalf("frozen: the joined member, least loaded, took %d of m1's 100 shards, want all", got)
	}
}

// TestAssignPinsHoldWhileTheMemberTakes: a pinned shard goes to its member
// and counts in its share; a pin to a member that is drained or not live
// is ignored.
func TestAssignPinsHoldWhileTheMemberTakes(t *testing.T) {
	shards, ms := shardRange(0, 90), members(3)
	cur, tok := steadyState(shards, ms)
	var s7 string
	for s, m := range cur {
		if m != "m2" {
			s7 = s
			break
		}
	}
	pins := map[string]string{s7: "m2"}
	got := assign.Assign(assign.Input{Shards: shards, Members: ms, Current: cur, Tokens: tok, Pins: pins})
	if got[s7] != "m2" {
		t.Fatalf("pinned shard %s targeted to %s, want m2", s7, got[s7])
	}
	if l := loads(got); l["m2"] != 30 {
		t.Fatalf("pin not counted in m2's share: loads %v", l)
	}
	if n := moves(cur, got); n != 2 { // the pinned shard in, one of m2's out
		t.Fatalf("a pin moved %d shards, want 2 (a swap)", n)
	}
	for _, in := range []assign.Input{
		{Shards: shards, Members: ms, Current: cur, Tokens: tok, Pins: pins, Drained: []string{"m2"}},
		{Shards: shards, Members: []string{"m0", "m1"}, Current: cur, Tokens: tok, Pins: pins},
	} {
		if got := assign.Assign(in); got[s7] == "m2" {
			t.Fatalf("pin to m2 held while m2 is drained or gone (members %v, drained %v)", in.Members, in.Drained)
		}
	}
}
