package partition

import (
	"cmp"
	"math"
	"slices"
)

// This file computes the sticky assignment: which live member should lead
// each shard. It is a pure function of the observed state, so every member
// computes the same answer from the same state and no coordinator is needed
// (see doc.go for why).
//
// The rule:
//
//  1. N shards over M live members give each member a quota of floor(N/M),
//     and exactly N mod M members one more. The extra places go to the
//     members that hold the most already (ties by member id), which moves
//     the fewest shards.
//  2. Every member keeps the shards it holds up to its quota, preferring
//     those it has held longest (by token, when known), then those it ranks
//     highest for by rendezvous hash.
//  3. The rest are dealt in shard-id order, each to the member with room
//     left that ranks highest for it: shards nobody holds, the excess of
//     members over their quota, and the shards reserved for a member that is
//     not live (inside its restart grace).
//
// So a member joining takes about N/(M+1) shards and nobody else moves; a
// member leaving moves only its own shards (whenever N >= M*(M-1), so that no
// quota shrinks below what a member already holds), each once: the member
// that leads a reserved shard meanwhile is the one that keeps it when the
// grace ends (the assignment after the grace, computed with it as the
// holder, is the same), and a member that returns within the grace holds
// its reserved shards again, exactly its quota, so it gets them back and
// nobody else moves.

// AssignmentFormat is the version of the assignment rule. Every release
// computes, for the same Input, byte-for-byte the assignment the previous
// release computed (golden vectors in testdata/assignment-v<N>.json pin
// it), so a rolling upgrade reshuffles no shard. A change of the rule
// comes with a new format number, named in the release notes.
const AssignmentFormat = 1

// Input is the state an assignment is computed from. Inputs equal as sets
// give equal assignments, whatever the order of their slices.
type Input struct {
	// Shards lists every shard id. Duplicates are ignored.
	Shards []string `json:"shards"`
	// Members lists the live members' ids. Duplicates are ignored.
	Members []string `json:"members"`
	// Current maps a shard to the member that holds it now: its leader, or a
	// member's reservation. Shards missing from the map, held by "", or held
	// by a member not in Members (a reservation for a member inside its
	// restart grace) are dealt (rule 3 above). A reservation counts once its
	// member is live again: it then holds the shard like its leader.
	Current map[string]string `json:"current,omitempty"`
	// Tokens optionally maps a held shard to its holder's fencing token. A
	// member over its quota keeps the shards it has held longest (smallest
	// token: zxids grow with time) and gives up those it got last; shards
	// without a token rank after, by rendezvous weight.
	Tokens map[string]uint64 `json:"tokens,omitempty"`
}

// Assign returns the target member of every shard: a member of in.Members
// for each shard of in.Shards. With no live members it returns an empty map.
// It runs in O(S·M) time for S shards and M members.
func Assign(in Input) map[string]string {
	members := sortedUnique(in.Members)
	shards := sortedUnique(in.Shards)
	target := make(map[string]string, len(shards))
	if len(members) == 0 {
		return target
	}
	b := newBalancer(members, in.Tokens)
	var loose []string // dealt in rule 3
	for _, s := range shards {
		if idx, live := b.index[in.Current[s]]; live {
			b.held[idx] = append(b.held[idx], s)
		} else {
			loose = append(loose, s)
		}
	}
	b.setQuotas(len(shards))
	loose = append(loose, b.keep(target)...)
	slices.Sort(loose)
	for _, s := range loose {
		target[s] = members[b.deal(s)]
	}
	return target
}

// balancer holds the per-member bookkeeping of one Assign call.
type balancer struct {
	members []string
	hashes  []uint64       // hashString of each member
	index   map[string]int // member id to position
	held    [][]string     // live-held shards per member
	quota   []int
	load    []int             // shards targeted so far
	tokens  map[string]uint64 // holders' tokens, may be nil
}

func newBalancer(members []string, tokens map[string]uint64) *balancer {
	b := &balancer{
		members: members,
		tokens:  tokens,
		hashes:  make([]uint64, len(members)),
		index:   make(map[string]int, len(members)),
		held:    make([][]string, len(members)),
		quota:   make([]int, len(members)),
		load:    make([]int, len(members)),
	}
	for i, m := range members {
		b.hashes[i] = hashString(m)
		b.index[m] = i
	}
	return b
}

// setQuotas gives every member floor(n/M) and the n mod M members that hold
// the most (counted up to the larger quota, ties by id) one more.
func (b *balancer) setQuotas(n int) {
	base, extra := n/len(b.members), n%len(b.members)
	order := make([]int, len(b.members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return cmp.Compare(min(len(b.held[y]), base+1), min(len(b.held[x]), base+1))
	})
	for rank, i := range order {
		b.quota[i] = base
		if rank < extra {
			b.quota[i]++
		}
	}
}

// keep targets each member's held shards to it up to its quota, highest
// rendezvous weight first, and returns the excess.
func (b *balancer) keep(target map[string]string) []string {
	var excess []string
	for i, held := range b.held {
		if len(held) > b.quota[i] {
			held = b.byWeight(i, held)
			excess = append(excess, held[b.quota[i]:]...)
			held = held[:b.quota[i]]
		}
		for _, s := range held {
			target[s] = b.members[i]
		}
		b.load[i] = len(held)
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
// counts s against it.
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
	b.load[best]++
	return best
}

// sortedUnique returns a sorted copy of ids without duplicates or empty ids.
func sortedUnique(ids []string) []string {
	out := slices.Clone(ids)
	if !slices.IsSorted(out) {
		slices.Sort(out)
	}
	out = slices.Compact(out)
	if len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	return out
}
