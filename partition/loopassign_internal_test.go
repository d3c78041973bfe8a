package partition

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
	"github.com/zkelect/zkelect/partition/internal/member"
)

// TestUnavailableFromMovesEqualsTheWholeMap checks the step's path for
// unavailable shards against the one it replaced: over random fleets
// (holders, drains, pins, members publishing unavailable shards, the
// shards we run a runner for), the targets concerningUsOf gives with
// UnavailableMoves applied by withMoves, and their count, equal
// concerningUs over member.DealUnavailable of the whole assignment.
func TestUnavailableFromMovesEqualsTheWholeMap(t *testing.T) {
	const me = "m1"
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 9))
		members := []string{"m0", "m1", "m2", "m3"}[:2+r.IntN(3)]
		shards := Range(0, 20+r.IntN(60))
		a := assign.NewAssigner()
		a.SetShards(shards)
		for _, s := range shards {
			if r.IntN(3) > 0 {
				a.Hold(s, members[r.IntN(len(members))], uint64(r.IntN(100)))
			}
		}
		p := assign.Params{Members: members, Pins: map[string]string{}}
		if r.IntN(4) == 0 {
			p.Drained = []string{members[r.IntN(len(members))]}
		}
		if r.IntN(3) == 0 {
			p.Pins[shards[r.IntN(len(shards))]] = members[r.IntN(len(members))]
		}
		res := a.Targets(p)
		byMember := map[string][]string{}
		for range 1 + r.IntN(10) {
			m := members[r.IntN(len(members))]
			byMember[m] = append(byMember[m], shards[r.IntN(len(shards))])
		}
		in := assign.Input{Members: p.Members, Drained: p.Drained, Pins: p.Pins, Current: map[string]string{}}
		for _, ss := range byMember {
			for _, s := range ss {
				if h := a.Holder(s); h != "" {
					in.Current[s] = h
				}
			}
		}
		runs := map[string]bool{}
		for _, s := range shards {
			if r.IntN(5) == 0 {
				runs[s] = true
			}
		}
		wantTargets, wantN := concerningUsRef(member.DealUnavailable(res.All(), in, byMember), me, runs)

		got, n := map[string]string{}, 0
		res.Of(me, func(s string) bool { got[s] = me; n++; return true })
		for s := range runs {
			if _, ours := got[s]; !ours {
				got[s] = res.Target(s)
			}
		}
		count := map[string]int{}
		for _, m := range p.Members {
			count[m] = res.Count(m)
		}
		moved := member.UnavailableMoves(res.Target, count, in, byMember)
		n = withMoves(got, n, moved, me, func(s string) bool { return runs[s] })
		if !maps.Equal(got, wantTargets) || n != wantN {
			t.Fatalf("seed %d: from the moves %v (%d ours), from the whole map %v (%d ours); moves %v",
				seed, got, n, wantTargets, wantN, moved)
		}
	}
}

// concerningUsRef is loop.concerningUs over a whole assignment: the
// shards targeted to me, and those a runner runs for with their targets.
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
