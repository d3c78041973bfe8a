package assign

import (
	"slices"
)

// This file computes an Assigner's result (Targets) and reads it: one
// shard's target, one member's share, or (for callers that need every
// shard) the whole map.

// Result is an assignment computed by Assigner.Targets. It reads its
// Assigner, so it is valid until the Assigner's next change.
type Result struct {
	a       *Assigner
	members []string          // the takers, sorted
	index   map[string]int    // taker to position
	pinned  map[string]int    // valid pins: shard to taker position
	dealt   map[string]string // the shards dealt (rule 3) to their target
	load    []int             // shards targeted to each taker
}

// Target returns the member shard is assigned to; "" when shard is not
// listed or no member is live.
func (r *Result) Target(shard string) string {
	if len(r.members) == 0 {
		return ""
	}
	sl, ok := r.a.shards[shard]
	if !ok || !sl.listed {
		return ""
	}
	if i, ok := r.pinned[shard]; ok {
		return r.members[i]
	}
	if m, ok := r.dealt[shard]; ok {
		return m
	}
	return sl.holder // a taker that keeps it
}

// Count returns how many shards are assigned to member.
func (r *Result) Count(member string) int {
	if i, ok := r.index[member]; ok {
		return r.load[i]
	}
	return 0
}

// Dealt returns how many shards this assignment dealt (rule 3: shards
// without a live holder and the excess of members over their quota).
func (r *Result) Dealt() int { return len(r.dealt) }

// Of calls yield with every shard assigned to member, in no order, until
// it returns false. It costs O(member's share + shards dealt + pins).
func (r *Result) Of(member string, yield func(shard string) bool) {
	i, ok := r.index[member]
	if !ok {
		return
	}
	for s, p := range r.pinned {
		if p == i && !yield(s) {
			return
		}
	}
	if h, ok := r.a.held[member]; ok {
		for _, sl := range h.items {
			if _, pin := r.pinned[sl.id]; pin {
				continue
			}
			if _, moved := r.dealt[sl.id]; moved {
				continue
			}
			if !yield(sl.id) {
				return
			}
		}
	}
	for s, m := range r.dealt {
		if m == member && !yield(s) {
			return
		}
	}
}

// All returns every listed shard's target, as Assign does. It costs
// O(S): for callers that need the whole map.
func (r *Result) All() map[string]string {
	out := make(map[string]string, r.a.listed)
	if len(r.members) == 0 {
		return out
	}
	for s, sl := range r.a.shards {
		if sl.listed {
			out[s] = r.Target(s)
		}
	}
	return out
}

// Targets computes the assignment for the shards listed and held as told
// and p: Result.Target(s) is Assign's target of s for the same input. The
// Result reads the Assigner: it is valid until its next change.
func (a *Assigner) Targets(p Params) *Result {
	members := takers(sortedUnique(p.Members), p.Drained)
	r := &Result{a: a, members: members}
	if len(members) == 0 {
		return r
	}
	b := newBalancer(members, nil, p.Weights)
	r.index, r.pinned = b.index, map[string]int{}
	for s, m := range p.Pins {
		if idx, ok := b.index[m]; ok {
			if sl, ok := a.shards[s]; ok && sl.listed {
				r.pinned[s] = idx
				b.load[idx]++
			}
		}
	}
	heldN := make([]int, len(members))
	for i, m := range members {
		if h, ok := a.held[m]; ok {
			heldN[i] = len(h.items)
		}
	}
	for s := range r.pinned {
		if idx, ok := b.index[a.shards[s].holder]; ok {
			heldN[idx]--
		}
	}
	b.setQuotasHeld(a.listed, func(i int) int { return heldN[i] })
	a.shrinkFree()
	loose := a.keep(b, r, heldN, p.Frozen)
	slices.Sort(loose)
	r.dealt = make(map[string]string, len(loose))
	for _, s := range loose {
		r.dealt[s] = members[b.deal(s)]
	}
	r.load = b.load
	return r
}

// shrinkFree makes the free map again once most of it emptied: a map
// keeps its capacity, and walking it costs O(capacity), so a cold start's
// free list (every shard) would cost every later step O(S) and keep its
// memory. The entries are copied into a new map: maps.Clone keeps the
// capacity too (a clone of an emptied 1,000,000-entry map holds 55 MB).
func (a *Assigner) shrinkFree() {
	if len(a.free) >= a.peak/8 {
		return
	}
	free := make(map[string]*slot, len(a.free))
	for s, sl := range a.free {
		free[s] = sl
	}
	a.free = free
	a.peak = len(a.free)
}

// keep counts each taker's kept shards against its load (balancer.keep)
// and returns the shards dealt: the excess of takers over their room,
// the free shards and those of holders that take no part; pins excluded.
func (a *Assigner) keep(b *balancer, r *Result, heldN []int, frozen bool) []string {
	isPinned := func(sl *slot) bool { _, ok := r.pinned[sl.id]; return ok }
	var loose []string
	for i, m := range r.members {
		room, n := max(b.quota[i]-b.load[i], 0), heldN[i]
		if !frozen && n > room {
			loose = a.held[m].last(n-room, isPinned, loose)
			n = room
		}
		b.load[i] += n
	}
	for s, sl := range a.free {
		if !isPinned(sl) {
			loose = append(loose, s)
		}
	}
	for m, h := range a.held {
		if _, taker := b.index[m]; taker {
			continue
		}
		for _, sl := range h.items {
			if !isPinned(sl) {
				loose = append(loose, sl.id)
			}
		}
	}
	return loose
}
