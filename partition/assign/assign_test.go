package assign_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
)

// members returns the ids m0 … m(n-1).
func members(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%d", i)
	}
	return ids
}

// loads counts the shards targeted to each member.
func loads(target map[string]string) map[string]int {
	l := map[string]int{}
	for _, m := range target {
		l[m]++
	}
	return l
}

// moves counts the shards whose target differs from their holder.
func moves(before, after map[string]string) int {
	n := 0
	for s, m := range after {
		if before[s] != m {
			n++
		}
	}
	return n
}

// checkBalanced fails unless every shard has a live target and loads are
// within floor/ceil of shards per member.
func checkBalanced(t *testing.T, in assign.Input, target map[string]string) {
	t.Helper()
	if len(target) != len(in.Shards) {
		t.Fatalf("targets for %d shards, want %d", len(target), len(in.Shards))
	}
	live := map[string]bool{}
	for _, m := range in.Members {
		live[m] = true
	}
	for s, m := range target {
		if !live[m] {
			t.Fatalf("shard %s targeted to %q, not a live member", s, m)
		}
	}
	n, mm := len(in.Shards), len(in.Members)
	floor, ceil := n/mm, (n+mm-1)/mm
	l := loads(target)
	for _, m := range in.Members {
		if l[m] < floor || l[m] > ceil {
			t.Fatalf("member %s has %d shards, want %d..%d (loads %v)", m, l[m], floor, ceil, l)
		}
	}
}

func TestAssignTable(t *testing.T) {
	tests := []struct {
		name    string
		in      assign.Input
		want    map[string]int // loads
		maxMove int
	}{
		{"no members", assign.Input{Shards: shardRange(0, 4)}, map[string]int{}, 0},
		{"no shards", assign.Input{Members: members(3)}, map[string]int{}, 0},
		{"one member takes all", assign.Input{Shards: shardRange(0, 5), Members: members(1)}, map[string]int{"m0": 5}, 5},
		{"first member up keeps only its share", assign.Input{
			Shards: shardRange(0, 6), Members: members(3),
			Current: map[string]string{"0": "m0", "1": "m0", "2": "m0", "3": "m0", "4": "m0", "5": "m0"},
		}, map[string]int{"m0": 2, "m1": 2, "m2": 2}, 4},
		{"extra place goes to the member holding most", assign.Input{
			Shards: shardRange(0, 7), Members: members(3),
			Current: map[string]string{"0": "m2", "1": "m2", "2": "m2", "3": "m1", "4": "m1"},
		}, map[string]int{"m0": 2, "m1": 2, "m2": 3}, 2},
		{"dead holder's shards are dealt within everybody's quota", assign.Input{
			Shards: shardRange(0, 6), Members: members(2),
			Current: map[string]string{"0": "m0", "1": "m0", "2": "m1", "3": "m1", "4": "gone", "5": "gone"},
		}, map[string]int{"m0": 3, "m1": 3}, 2},
		{"over its quota a member gives up the shards it got last", assign.Input{
			Shards: shardRange(0, 4), Members: members(2),
			Current: map[string]string{"0": "m0", "1": "m0", "2": "m0", "3": "m0"},
			Tokens:  map[string]uint64{"0": 40, "1": 10, "2": 30, "3": 20},
		}, map[string]int{"m0": 2, "m1": 2}, 2},
		{"duplicates and empty ids ignored", assign.Input{
			Shards: []string{"a", "a", "b"}, Members: []string{"x", "x", ""},
		}, map[string]int{"x": 2}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assign.Assign(tt.in)
			if tt.want != nil && !maps.Equal(loads(got), tt.want) {
				t.Fatalf("loads %v, want %v (targets %v)", loads(got), tt.want, got)
			}
			if m := moves(tt.in.Current, got); m > tt.maxMove {
				t.Fatalf("%d moves, want at most %d (targets %v)", m, tt.maxMove, got)
			}
			if tt.in.Tokens != nil && (got["1"] != "m0" || got["3"] != "m0") {
				t.Fatalf("m0 kept %v, want the shards with the smallest tokens (1 and 3)", got)
			}
		})
	}
}

func TestAssignDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := randomInput(rng, 500, 7)
	want := assign.Assign(in)
	for range 20 {
		shuffled := assign.Input{Shards: slices.Clone(in.Shards), Members: slices.Clone(in.Members), Current: maps.Clone(in.Current)}
		rng.Shuffle(len(shuffled.Shards), func(i, j int) { shuffled.Shards[i], shuffled.Shards[j] = shuffled.Shards[j], shuffled.Shards[i] })
		rng.Shuffle(len(shuffled.Members), func(i, j int) { shuffled.Members[i], shuffled.Members[j] = shuffled.Members[j], shuffled.Members[i] })
		if got := assign.Assign(shuffled); !maps.Equal(got, want) {
			t.Fatal("same state in another order gave another assignment")
		}
	}
}

// randomInput holds shards by random live members, non-members and nobody.
func randomInput(rng *rand.Rand, shards, nMembers int) assign.Input {
	in := assign.Input{Shards: shardRange(0, shards), Members: members(nMembers), Current: map[string]string{}}
	holders := append(members(nMembers+3), "")
	skew := rng.IntN(len(holders)) // one holder gets far more, like the first member up
	for _, s := range in.Shards {
		h := holders[rng.IntN(len(holders))]
		if rng.IntN(2) == 0 {
			h = holders[skew]
		}
		if h != "" {
			in.Current[s] = h
		}
	}
	return in
}

// TestAssignProperties checks, from random start states: every shard gets a
// live target, balanced within floor..ceil over all shards; and the moves
// are the minimum, the shards of holders that are not live (orphans and
// reservations) plus the excess of live holders over their quota.
func TestAssignProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		in := randomInput(rng, 1+rng.IntN(400), 1+rng.IntN(9))
		got := assign.Assign(in)
		checkBalanced(t, in, got)
		live := map[string]bool{}
		for _, m := range in.Members {
			live[m] = true
		}
		held, quota := map[string]int{}, loads(got)
		minMoves := 0
		for _, s := range in.Shards {
			if h := in.Current[s]; live[h] {
				held[h]++
			} else {
				minMoves++
			}
		}
		for _, m := range in.Members {
			minMoves += max(0, held[m]-quota[m])
		}
		if m := moves(in.Current, got); m != minMoves {
			t.Fatalf("%d moves, want the minimum %d", m, minMoves)
		}
	}
}

// converge returns the assignment reached from cur when every member takes
// its targets, which is what the manager converges to.
func converge(shards, live []string, cur map[string]string) map[string]string {
	return assign.Assign(assign.Input{Shards: shards, Members: live, Current: cur})
}

// TestAssignMovesOnJoinAndLeave grows a group member by member and shrinks
// it again, checking and printing the moves at each step.
func TestAssignMovesOnJoinAndLeave(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		shards := shardRange(0, n)
		all := members(10)
		cur := converge(shards, all[:1], nil)
		for m := 2; m <= len(all); m++ {
			next := converge(shards, all[:m], cur)
			checkBalanced(t, assign.Input{Shards: shards, Members: all[:m]}, next)
			got, ideal := moves(cur, next), float64(n)/float64(m)
			t.Logf("S=%d join  M=%d->%d: %d moves (S/(M+1)=%.0f, %.2fx)", n, m-1, m, got, ideal, float64(got)/ideal)
			if float64(got) > ideal*1.05 {
				t.Errorf("S=%d join to M=%d moved %d, more than 5%% above %.0f", n, m, got, ideal)
			}
			for s, tgt := range next {
				if tgt != all[m-1] && tgt != cur[s] {
					t.Fatalf("join moved shard %s between old members %s -> %s", s, cur[s], tgt)
				}
			}
			cur = next
		}
		for m := len(all); m > 1; m-- {
			leaver := all[m-1]
			rest := map[string]string{}
			for s, h := range cur {
				if h != leaver {
					rest[s] = h
				}
			}
			next := converge(shards, all[:m-1], rest)
			got := moves(cur, next)
			t.Logf("S=%d leave M=%d->%d: %d moves (leaver held %d)", n, m, m-1, got, loads(cur)[leaver])
			if got != loads(cur)[leaver] {
				t.Errorf("leave moved %d shards, the leaver held %d", got, loads(cur)[leaver])
			}
			cur = next
		}
	}
}

// TestAssignReservedShardsComeBack: a member in its restart grace keeps its
// shards reserved; when it returns it gets exactly them back and nobody else
// moves.
func TestAssignReservedShardsComeBack(t *testing.T) {
	shards, all := shardRange(0, 1000), members(4)
	cur := map[string]string{}
	for _, m := range []int{1, 2, 3, 4} {
		cur = converge(shards, all[:m], cur)
	}
	// m3 leaves; its shards are reserved (the map still names it) and led
	// by live members meanwhile.
	during := converge(shards, all[:3], cur)
	for s, h := range cur {
		if h != "m3" && during[s] != h {
			t.Fatalf("shard %s of live %s moved during the grace", s, h)
		}
	}
	// m3 is back, still holding its reservation: nothing moves but its own.
	after := converge(shards, all, cur)
	if !maps.Equal(after, cur) {
		t.Fatalf("returning member did not get exactly its shards back: %d moves", moves(cur, after))
	}
}

func BenchmarkAssign(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, m := range []int{3, 10} {
			b.Run(fmt.Sprintf("S=%d/M=%d", n, m), func(b *testing.B) {
				shards, all := shardRange(0, n), members(m)
				cur := converge(shards, all[:m-1], nil) // a join: the worst case
				in := assign.Input{Shards: shards, Members: all, Current: cur}
				b.ReportAllocs()
				for b.Loop() {
					assign.Assign(in)
				}
			})
		}
	}
}

// steadyState returns the assignment of shards over live reached by members
// joining one by one, each join converged, with tokens growing in the
// order shards were taken.
func steadyState(shards, live []string) (map[string]string, map[string]uint64) {
	var cur map[string]string
	tokens, zxid := map[string]uint64{}, uint64(0)
	for m := 1; m <= len(live); m++ {
		next := converge(shards, live[:m], cur)
		for _, s := range slices.Sorted(maps.Keys(next)) {
			if next[s] != cur[s] {
				zxid++
				tokens[s] = zxid
			}
		}
		cur = next
	}
	return cur, tokens
}

// TestAssignGracefulLeaveMovesEachShardOnce walks, for random shard and
// member counts, a member leaving and then either its restart grace
// lapsing or it returning within it. During the grace its shards are led
// by others, balanced over every shard, and nobody else's shard moves; when
// the grace lapses (its reservation is gone and the interim leaders hold
// its shards) nothing moves again; when it returns it gets exactly its
// shards back and nobody else moves.
func TestAssignGracefulLeaveMovesEachShardOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		nMembers := 2 + rng.IntN(9)
		shards, all := shardRange(0, 1+rng.IntN(2000)), members(nMembers)
		before, tokens := steadyState(shards, all)
		checkBalanced(t, assign.Input{Shards: shards, Members: all}, before)
		leaver := all[rng.IntN(nMembers)]
		rest := slices.DeleteFunc(slices.Clone(all), func(m string) bool { return m == leaver })

		// The grace runs: the leaver's shards are reserved for it.
		during := assign.Assign(assign.Input{Shards: shards, Members: rest, Current: before, Tokens: tokens})
		checkBalanced(t, assign.Input{Shards: shards, Members: rest}, during)
		n, m := len(shards), nMembers
		roomForAll := (n+m-1)/m <= n/(m-1) // no quota shrinks below a member's old share
		for s, h := range before {
			if h != leaver && during[s] != h && roomForAll {
				t.Fatalf("trial %d (S=%d M=%d): shard %s of %s moved to %s while %s was away", trial, n, m, s, h, during[s], leaver)
			}
		}

		// The grace lapses: the interim leaders hold the leaver's shards.
		lapsed := maps.Clone(tokens)
		for s, h := range before {
			if h == leaver {
				lapsed[s] = tokens[s] + uint64(len(shards)) // led later than every other
			}
		}
		after := assign.Assign(assign.Input{Shards: shards, Members: rest, Current: during, Tokens: lapsed})
		if got := moves(during, after); got != 0 {
			t.Fatalf("trial %d (S=%d M=%d): %d shards moved again when the grace lapsed", trial, n, m, got)
		}

		// Or it returns within the grace: its reservation names it again.
		back := assign.Assign(assign.Input{Shards: shards, Members: all, Current: before, Tokens: tokens})
		if !maps.Equal(back, before) {
			t.Fatalf("trial %d (S=%d M=%d): returning %s: %d shards differ from before it left", trial, n, m, leaver, moves(before, back))
		}
	}
}

// shardRange returns the shard ids "lo" … "hi-1" in decimal, as
// partition.Range names them.
func shardRange(lo, hi int) []string {
	ids := make([]string, 0, max(hi-lo, 0))
	for i := lo; i < hi; i++ {
		ids = append(ids, strconv.Itoa(i))
	}
	return ids
}
