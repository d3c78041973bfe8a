package assign

// This file reads an Assigner's result: one shard's target, one member's
// share, or (for callers that need every shard) the whole map.

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
