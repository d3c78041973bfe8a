// Package assign computes which live member of a partition group should
// lead each shard: the sticky assignment, with its quotas and rendezvous
// hash. It is pure (standard library only, no I/O, no clock, no
// randomness), so every member computes the same answer from the same
// observed state and no coordinator is needed; golden vectors
// (testdata/assignment-v<Format>.json) pin it across releases. The
// partition package feeds it what the members publish in ZooKeeper.
//
// Assign computes the whole map from the whole input, O(S·M). An
// Assigner computes the same targets kept from changes (a holder's
// change, the shard list, the members and the operator's state given at
// each Targets), at a cost of the shards it must deal rather than the
// whole list: a member's loop uses it (assigner.go).
package assign

import "slices"

// This file computes the sticky assignment: which live member should lead
// each shard. It is a pure function of the observed state, so every member
// computes the same answer from the same state and no coordinator is needed
// (see partition's doc.go for why). The operator's state (drained
// members, a freeze, pins, weights: see package partition/operator) is
// part of that input.
//
// The rule:
//
//  0. Drained members take no part (unless every live member is drained:
//     then the drains are ignored, availability first). A shard pinned to
//     a taking member is its, and counts against its quota.
//  1. N shards over members of weights w give member i a quota of
//     floor(N·wᵢ/Σw), and the remaining places go one each to the members
//     with the largest remainders of N·wᵢ/Σw, then to those that hold the
//     most already (ties by member id), which moves the fewest shards. With
//     equal weights: floor(N/M), and exactly N mod M members one more. No
//     quota exceeds ceil(N·wᵢ/Σw).
//  2. Every member keeps the shards it holds up to its quota, preferring
//     those it has held longest (by token, when known), then those it ranks
//     highest for by rendezvous hash. While frozen, every member keeps every
//     shard it holds: no balancing move.
//  3. The rest are dealt in shard-id order, each to the member with room
//     left that ranks highest for it: shards nobody holds, the excess of
//     members over their quota, and the shards reserved for a member that is
//     not live (inside its restart grace). When nobody has room (a freeze,
//     or pins beyond a quota) the least loaded member for its weight takes
//     it: a shard is never left without a target.
//
// So a member joining takes about N/(M+1) shards and nobody else moves; a
// member leaving moves only its own shards (whenever N >= M*(M-1), so that no
// quota shrinks below what a member already holds), each once: the member
// that leads a reserved shard meanwhile is the one that keeps it when the
// grace ends (the assignment after the grace, computed with it as the
// holder, is the same), and a member that returns within the grace holds
// its reserved shards again, exactly its quota, so it gets them back and
// nobody else moves. A drained member leaves like a member that left
// without a grace; undrained, it joins again.

// Format is the version of the assignment rule. Every release
// computes, for the same Input, byte-for-byte the assignment the previous
// release computed (golden vectors in testdata/assignment-v<N>.json pin
// it), so a rolling upgrade reshuffles no shard. A change of the rule
// comes with a new format number, named in the release notes. Inputs
// without weights, pins, drains or a freeze give the same assignment as
// releases before those existed.
const Format = 1

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
	// Weights optionally maps a member to its weight, its share of the
	// shards relative to the others'. Missing or non-positive weights
	// count as 1.
	Weights map[string]int `json:"weights,omitempty"`
	// Drained lists members that take no shards although live. Ignored
	// when it names every live member.
	Drained []string `json:"drained,omitempty"`
	// Pins maps a shard to the member it must be assigned to, whenever
	// that member is in Members and not drained; otherwise the pin is
	// ignored.
	Pins map[string]string `json:"pins,omitempty"`
	// Frozen keeps every held shard with its holder (maintenance mode):
	// only shards without a live holder are dealt.
	Frozen bool `json:"frozen,omitempty"`
}

// Assign returns the target member of every shard: a member of in.Members
// (not drained, unless all are) for each shard of in.Shards. With no live
// members it returns an empty map. It runs in O(S·M) time for S shards and
// M members.
func Assign(in Input) map[string]string {
	members := takers(sortedUnique(in.Members), in.Drained)
	shards := sortedUnique(in.Shards)
	target := make(map[string]string, len(shards))
	if len(members) == 0 {
		return target
	}
	b := newBalancer(members, in.Tokens, in.Weights)
	var loose []string // dealt in rule 3
	for _, s := range shards {
		if idx, ok := b.index[in.Pins[s]]; ok {
			target[s] = members[idx]
			b.load[idx]++
			continue
		}
		if idx, live := b.index[in.Current[s]]; live {
			b.held[idx] = append(b.held[idx], s)
		} else {
			loose = append(loose, s)
		}
	}
	b.setQuotas(len(shards))
	loose = append(loose, b.keep(target, in.Frozen)...)
	slices.Sort(loose)
	for _, s := range loose {
		target[s] = members[b.deal(s)]
	}
	return target
}

// takers returns members without the drained ones, or members when that
// would leave none.
func takers(members, drained []string) []string {
	if len(drained) == 0 {
		return members
	}
	out := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return slices.Contains(drained, m) })
	if len(out) == 0 {
		return members
	}
	return out
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
