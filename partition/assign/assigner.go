package assign

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
	gen    uint32                 // SetShards calls so far
}

// NewAssigner returns an Assigner with no shard listed or held.
func NewAssigner() *Assigner {
	return &Assigner{shards: map[string]*slot{}, free: map[string]*slot{}, held: map[string]*heldShards{}}
}

// SetShards replaces the shard list (Input.Shards). It costs O(S) for S
// shards listed before and after: call it when the list changes. The
// first list sizes the Assigner's maps at once.
func (a *Assigner) SetShards(ids []string) {
	a.gen++
	if len(a.shards) == 0 {
		a.shards, a.free = make(map[string]*slot, len(ids)), make(map[string]*slot, len(ids))
		a.peak = len(ids) // the free map's capacity: shrinkFree makes it again once it is mostly empty
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		sl := a.slotOf(id)
		if sl.gen == a.gen {
			continue // listed twice
		}
		sl.gen = a.gen
		if !sl.listed {
			sl.listed = true
			a.listed++
			a.place(sl)
		}
	}
	for _, sl := range a.shards {
		if sl.listed && sl.gen != a.gen {
			a.unplace(sl)
			sl.listed = false
			a.listed--
			a.forgetIfIdle(sl)
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

// Listed reports whether shard is in the list SetShards gave last.
func (a *Assigner) Listed(shard string) bool {
	sl, ok := a.shards[shard]
	return ok && sl.listed
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
