package assign

import (
	"cmp"
	"math"
	"slices"
)

// This file holds the per-member bookkeeping of one Assign call: quotas by
// weight, what each member keeps, and the rendezvous-hash deal of the rest.

// balancer holds the per-member bookkeeping of one Assign call.
type balancer struct {
	members []string
	hashes  []uint64       // hashString of each member
	weights []int          // each member's weight, at least 1
	index   map[string]int // member id to position
	held    [][]string     // live-held shards per member, pins excluded
	quota   []int
	load    []int             // shards targeted so far, pins included
	tokens  map[string]uint64 // holders' tokens, may be nil
}

func newBalancer(members []string, tokens map[string]uint64, weights map[string]int) *balancer {
	b := &balancer{
		members: members,
		tokens:  tokens,
		hashes:  make([]uint64, len(members)),
		weights: make([]int, len(members)),
		index:   make(map[string]int, len(members)),
		held:    make([][]string, len(members)),
		quota:   make([]int, len(members)),
		load:    make([]int, len(members)),
	}
	for i, m := range members {
		b.hashes[i] = hashString(m)
		b.index[m] = i
		b.weights[i] = max(weights[m], 1)
	}
	return b
}

// setQuotas gives member i floor(n·wᵢ/Σw) and hands the remaining places,
// one each, to the members with the largest remainders, then to those that
// hold the most (pins included, counted up to their floor plus one), then
// by id. With equal weights every remainder is equal: floor(n/M) each, and
// one more to the n mod M members holding the most.
func (b *balancer) setQuotas(n int) {
	b.setQuotasHeld(n, func(i int) int { return len(b.held[i]) })
}

// setQuotasHeld is setQuotas with member i's count of live-held shards
// (pins excluded) given by held: the Assigner keeps counts, not lists.
func (b *balancer) setQuotasHeld(n int, held func(i int) int) {
	total := 0
	for _, w := range b.weights {
		total += w
	}
	base := make([]int, len(b.members))
	rem := make([]int, len(b.members))
	extra := n
	for i, w := range b.weights {
		base[i], rem[i] = n*w/total, n*w%total
		extra -= base[i]
	}
	order := make([]int, len(b.members))
	for i := range order {
		order[i] = i
	}
	holds := func(i int) int { return min(held(i)+b.load[i], base[i]+1) }
	slices.SortStableFunc(order, func(x, y int) int {
		if c := cmp.Compare(rem[y], rem[x]); c != 0 {
			return c
		}
		return cmp.Compare(holds(y), holds(x))
	})
	for rank, i := range order {
		b.quota[i] = base[i]
		if rank < extra {
			b.quota[i]++
		}
	}
}

// keep targets each member's held shards to it up to its quota (pins
// counted first; every held shard when frozen), longest held first, and
// returns the excess.
func (b *balancer) keep(target map[string]string, frozen bool) []string {
	var excess []string
	for i, held := range b.held {
		room := max(b.quota[i]-b.load[i], 0)
		if !frozen && len(held) > room {
			held = b.byWeight(i, held)
			excess = append(excess, held[room:]...)
			held = held[:room]
		}
		for _, s := range held {
			target[s] = b.members[i]
		}
		b.load[i] += len(held)
	}
	return excess
}

// byWeight sorts shards in the order member i keeps them: smallest token
// first (tokens missing rank last), then highest rendezvous weight, then
// shard id.
func (b *balancer) byWeight(i int, shards []string) []string {
	type ranked struct {
		id  string
		tok uint64
		w   uint64
	}
	rs := make([]ranked, len(shards))
	for k, s := range shards {
		tok, ok := b.tokens[s]
		if !ok || tok == 0 {
			tok = math.MaxUint64
		}
		rs[k] = ranked{s, tok, weight(hashString(s), b.hashes[i])}
	}
	slices.SortFunc(rs, func(x, y ranked) int {
		if c := cmp.Compare(x.tok, y.tok); c != 0 {
			return c
		}
		if c := cmp.Compare(y.w, x.w); c != 0 {
			return c
		}
		return cmp.Compare(x.id, y.id)
	})
	for k, r := range rs {
		shards[k] = r.id
	}
	return shards
}

// deal returns the highest-ranked member for s that has room left, and
// counts s against it. When no member has room, it returns the member
// least loaded for its weight (ties by rank).
func (b *balancer) deal(s string) int {
	sh := hashString(s)
	best, bestW := -1, uint64(0)
	for i, mh := range b.hashes {
		if b.load[i] >= b.quota[i] {
			continue
		}
		if w := weight(sh, mh); best < 0 || w > bestW {
			best, bestW = i, w
		}
	}
	if best < 0 {
		best = b.leastLoaded(sh)
	}
	b.load[best]++
	return best
}

// leastLoaded returns the member with the smallest load per weight, ties
// to the highest rendezvous weight for the shard hash sh.
func (b *balancer) leastLoaded(sh uint64) int {
	best := 0
	for i := 1; i < len(b.members); i++ {
		// load_i/w_i < load_best/w_best, without division
		c := cmp.Compare(b.load[i]*b.weights[best], b.load[best]*b.weights[i])
		if c < 0 || (c == 0 && weight(sh, b.hashes[i]) > weight(sh, b.hashes[best])) {
			best = i
		}
	}
	return best
}
