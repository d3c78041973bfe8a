package assign_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
)

// model is what the Assigner was told, as an Input for Assign.
type model struct {
	shards  []string
	current map[string]string
	tokens  map[string]uint64
}

func (m model) input(p assign.Params) assign.Input {
	return assign.Input{
		Shards: m.shards, Members: p.Members, Current: m.current, Tokens: m.tokens,
		Weights: p.Weights, Drained: p.Drained, Pins: p.Pins, Frozen: p.Frozen,
	}
}

// randomParams draws live members, weights, drains, pins and a freeze from
// the pools.
func randomParams(r *rand.Rand, memberPool, shardPool []string) assign.Params {
	var p assign.Params
	for _, m := range memberPool {
		if r.IntN(4) > 0 {
			p.Members = append(p.Members, m)
		}
	}
	if r.IntN(3) == 0 {
		p.Weights = map[string]int{}
		for _, m := range p.Members {
			p.Weights[m] = r.IntN(4) // 0: counts as 1
		}
	}
	if r.IntN(4) == 0 && len(p.Members) > 0 {
		p.Drained = []string{p.Members[r.IntN(len(p.Members))]}
	}
	if r.IntN(3) == 0 {
		p.Pins = map[string]string{}
		for range r.IntN(4) {
			p.Pins[shardPool[r.IntN(len(shardPool))]] = memberPool[r.IntN(len(memberPool))]
		}
	}
	p.Frozen = r.IntN(6) == 0
	return p
}

// checkResult compares every part of a Result with Assign's map.
func checkResult(t *testing.T, step int, res *assign.Result, want map[string]string, pool []string, memberPool []string) {
	t.Helper()
	if got := res.All(); !maps.Equal(got, want) {
		t.Fatalf("step %d: All differs from Assign:\n got %v\nwant %v", step, got, want)
	}
	for _, s := range pool {
		if got := res.Target(s); got != want[s] {
			t.Fatalf("step %d: Target(%s) = %q, Assign says %q", step, s, got, want[s])
		}
	}
	for _, m := range memberPool {
		var of []string
		res.Of(m, func(s string) bool { of = append(of, s); return true })
		var exp []string
		for s, to := range want {
			if to == m {
				exp = append(exp, s)
			}
		}
		slices.Sort(of)
		slices.Sort(exp)
		if !slices.Equal(of, exp) || res.Count(m) != len(exp) {
			t.Fatalf("step %d: Of(%s) = %v (Count %d), Assign gives it %v", step, m, of, res.Count(m), exp)
		}
	}
}

// TestAssignerEqualsAssign drives an Assigner through random changes
// (holders taken and released with random tokens, the shard list
// replaced, members, weights, drains, pins and freezes redrawn) and
// checks after each that its targets are Assign's for the same input,
// shard for shard.
func TestAssignerEqualsAssign(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 32))
			shardPool := make([]string, 20+r.IntN(60))
			for i := range shardPool {
				shardPool[i] = fmt.Sprintf("s%02d", i)
			}
			memberPool := members(2 + r.IntN(6))
			a := assign.NewAssigner()
			m := model{current: map[string]string{}, tokens: map[string]uint64{}}
			p := randomParams(r, memberPool, shardPool)
			for step := range 400 {
				switch op := r.IntN(20); {
				case op == 0:
					m.shards = nil
					for _, s := range shardPool {
						if r.IntN(5) > 0 {
							m.shards = append(m.shards, s)
						}
					}
					a.SetShards(m.shards)
				case op <= 2:
					p = randomParams(r, memberPool, shardPool)
				case op <= 5:
					s := shardPool[r.IntN(len(shardPool))]
					delete(m.current, s)
					delete(m.tokens, s)
					a.Release(s)
				default:
					s := shardPool[r.IntN(len(shardPool))]
					holder := memberPool[r.IntN(len(memberPool))]
					tok := uint64(r.IntN(30)) // 0: unknown; ties are common
					m.current[s], m.tokens[s] = holder, tok
					a.Hold(s, holder, tok)
				}
				want := assign.Assign(m.input(p))
				checkResult(t, step, a.Targets(p), want, shardPool, memberPool)
			}
		})
	}
}

// TestAssignerGoldenInputs feeds every golden vector's input to an
// Assigner: its targets are the vector's.
func TestAssignerGoldenInputs(t *testing.T) {
	for _, v := range readGolden(t).Vectors {
		a := assign.NewAssigner()
		a.SetShards(v.Input.Shards)
		for s, m := range v.Input.Current {
			a.Hold(s, m, v.Input.Tokens[s])
		}
		p := assign.Params{Members: v.Input.Members, Weights: v.Input.Weights, Drained: v.Input.Drained, Pins: v.Input.Pins, Frozen: v.Input.Frozen}
		if got := a.Targets(p).All(); !maps.Equal(got, v.Target) {
			t.Errorf("%s: Assigner's targets differ from the golden vector's", v.Name)
		}
	}
}
