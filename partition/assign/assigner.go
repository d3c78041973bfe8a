package assign

import (
	"maps"
	"slices"
)

// This file keeps the assignment's state between steps, so that a member
// recomputes from what changed: Assign walks every shard (O(S·M)); an
// Assigner is told each holder's change (Hold, Release) and the shard list
// (SetShards), and Targets then costs O(M log M) plus O(L·M) for the L
// shards it deals (those nobody live holds, the excess of members over
// their quota, the shards reserved for absent members), never the whole
// list. Its targets are Assign's, shard for shard, for the Input the same
// holders, tokens and parameters make (property-tested against Assign):
// no new format.

// Params are the parts of an Input that are not per shard: the live
// members and the operator's state, as Input documents them.
type Params struct {
	Members []string
	Weights map[string]int
	Drained []string
	Pins    map[string]string
	Frozen  bool
}

// Assigner is the sticky assignment kept up to date from changes. One
// goroutine owns an Assigner; the zero value is not ready: use
// NewAssigner.
type Assigner struct {
	shards map[string]*slot       // every shard listed or held
	listed int                    // shards in the list
	free   map[string]*slot       // listed shards nobody holds
	peak   int                    // the most free shards since free was last made
	held   map[string]*heldShards // a holder's listed shards
}

// slot is one shard's state in an Assigner.
type slot struct {
	id     string
	holder string // "" when none
	key    uint64 // the holder's token, math.MaxUint64 when unknown (0)
	w      uint64 // the holder's rendezvous weight for the shard
	at     int    // index in its holder's heldShards, -1 when in none
	listed bool
}

// NewAssigner returns an Assigner with no shard listed or held.
func NewAssigner() *Assigner {
	return &Assigner{shards: map[string]*slot{}, free: map[string]*slot{}, held: map[string]*heldShards{}}
}

// SetShards replaces the shard list (Input.Shards). It costs O(S) for S
// shards listed before and after: call it when the list changes.
func (a *Assigner) SetShards(ids []string) {
	next := make(map[string]bool, len(ids))
	for _, id := range ids {
		if id != "" {
			next[id] = true
		}
	}
	for id, sl := range a.shards {
		if sl.listed && !next[id] {
			a.unplace(sl)
			sl.listed = false
			a.listed--
			a.forgetIfIdle(sl)
		}
	}
	for id := range next {
		sl := a.slotOf(id)
		if !sl.listed {
			sl.listed = true
			a.listed++
			a.place(sl)
		}
	}
}

// Hold records that member holds shard (Input.Current) with token
// (Input.Tokens; 0 when unknown). member "" is Release.
func (a *Assigner) Hold(shard, member string, token uint64) {
	if member == "" {
		a.Release(shard)
		return
	}
	sl := a.slotOf(shard)
	key := tokenKey(token)
	if sl.holder == member && sl.key == key {
		return
	}
	a.unplace(sl)
	sl.holder, sl.key = member, key
	a.place(sl)
}

// Release records that nobody holds shard.
func (a *Assigner) Release(shard string) {
	sl, ok := a.shards[shard]
	if !ok || sl.holder == "" {
		return
	}
	a.unplace(sl)
	sl.holder, sl.key, sl.w = "", 0, 0
	a.place(sl)
	a.forgetIfIdle(sl)
}

// Holder returns shard's holder as last told ("" when none).
func (a *Assigner) Holder(shard string) string {
	if sl, ok := a.shards[shard]; ok {
		return sl.holder
	}
	return ""
}

func (a *Assigner) slotOf(id string) *slot {
	sl, ok := a.shards[id]
	if !ok {
		sl = &slot{id: id, at: -1}
		a.shards[id] = sl
	}
	return sl
}

// place puts a listed slot in its holder's heldShards or among the free.
func (a *Assigner) place(sl *slot) {
	if !sl.listed {
		return
	}
	if sl.holder == "" {
		a.free[sl.id] = sl
		a.peak = max(a.peak, len(a.free))
		return
	}
	h, ok := a.held[sl.holder]
	if !ok {
		h = &heldShards{hash: hashString(sl.holder)}
		a.held[sl.holder] = h
	}
	sl.w = weight(hashString(sl.id), h.hash)
	h.push(sl)
}

// unplace takes a slot out of where place put it.
func (a *Assigner) unplace(sl *slot) {
	if !sl.listed {
		return
	}
	if sl.holder == "" {
		delete(a.free, sl.id)
		return
	}
	h := a.held[sl.holder]
	h.remove(sl)
	if len(h.items) == 0 {
		delete(a.held, sl.holder)
	}
}

func (a *Assigner) forgetIfIdle(sl *slot) {
	if !sl.listed && sl.holder == "" {
		delete(a.shards, sl.id)
	}
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
// free list (every shard) would cost every later step O(S).
func (a *Assigner) shrinkFree() {
	if len(a.free) >= a.peak/8 {
		return
	}
	a.free = maps.Clone(a.free)
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
