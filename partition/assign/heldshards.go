package assign

import "math"

// This file keeps one holder's shards in the order Assign gives them up
// when the holder is over its quota (balancer.byWeight, reversed): the
// largest token first (held most recently; unknown tokens before all),
// then the lowest rendezvous weight, then the largest id. A binary heap
// with each slot's position, so a holder change costs O(log h) and the
// k shards given up are read in O(k log k), without sorting the h held.

// heldShards is a max-heap of one holder's listed shards: items[0] is the
// first given up.
type heldShards struct {
	hash  uint64 // hashString of the holder
	items []*slot
}

// tokenKey is the order key of a token: unknown (0) ranks after every
// known one, as balancer.byWeight ranks it.
func tokenKey(token uint64) uint64 {
	if token == 0 {
		return math.MaxUint64
	}
	return token
}

// before reports whether x is given up before y.
func before(x, y *slot) bool {
	if x.key != y.key {
		return x.key > y.key
	}
	if x.w != y.w {
		return x.w < y.w
	}
	return x.id > y.id
}

func (h *heldShards) push(sl *slot) {
	sl.at = int32(len(h.items))
	h.items = append(h.items, sl)
	h.up(int(sl.at))
}

func (h *heldShards) remove(sl *slot) {
	i, last := int(sl.at), len(h.items)-1
	if i != last {
		h.swap(i, last)
	}
	h.items[last] = nil
	h.items = h.items[:last]
	sl.at = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
}

func (h *heldShards) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].at, h.items[j].at = int32(i), int32(j)
}

func (h *heldShards) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !before(h.items[i], h.items[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down moves item i down to its place and reports whether it moved.
func (h *heldShards) down(i int) bool {
	start, n := i, len(h.items)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && before(h.items[r], h.items[c]) {
			c = r
		}
		if !before(h.items[c], h.items[i]) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}

// last appends to out the ids of the k shards given up first, skipping
// those skip names (they count for nothing), and returns out. It walks
// the heap best-first with a frontier heap of positions: O(k log k).
func (h *heldShards) last(k int, skip func(*slot) bool, out []string) []string {
	if k <= 0 || len(h.items) == 0 {
		return out
	}
	frontier := []int{0}
	for k > 0 && len(frontier) > 0 {
		i := frontier[0]
		frontier = h.popFrontier(frontier)
		if sl := h.items[i]; !skip(sl) {
			out = append(out, sl.id)
			k--
		}
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h.items) {
				frontier = h.pushFrontier(frontier, c)
			}
		}
	}
	return out
}

// pushFrontier adds position i to the frontier heap f (ordered as the
// items at its positions).
func (h *heldShards) pushFrontier(f []int, i int) []int {
	f = append(f, i)
	for j := len(f) - 1; j > 0; {
		p := (j - 1) / 2
		if !before(h.items[f[j]], h.items[f[p]]) {
			break
		}
		f[j], f[p] = f[p], f[j]
		j = p
	}
	return f
}

// popFrontier removes the frontier heap's first position.
func (h *heldShards) popFrontier(f []int) []int {
	last := len(f) - 1
	f[0] = f[last]
	f = f[:last]
	for j := 0; ; {
		c := 2*j + 1
		if c >= len(f) {
			break
		}
		if r := c + 1; r < len(f) && before(h.items[f[r]], h.items[f[c]]) {
			c = r
		}
		if !before(h.items[f[c]], h.items[f[j]]) {
			break
		}
		f[j], f[c] = f[c], f[j]
		j = c
	}
	return f
}

// slot is one shard's state in an Assigner.
type slot struct {
	id     string
	holder string // "" when none
	key    uint64 // the holder's token, math.MaxUint64 when unknown (0)
	w      uint64 // the holder's rendezvous weight for the shard
	at     int32  // index in its holder's heldShards, -1 when in none
	gen    uint32 // the SetShards call that last listed it (Assigner.gen)
	listed bool
}
