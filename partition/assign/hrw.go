package assign

import (
	"fmt"
	"slices"
)

// This file holds the rendezvous (highest random weight) hash that orders
// members for a shard. It must give the same numbers in every process, on
// every platform and in every release, because members compute the
// assignment independently: it is FNV-1a (64 bits) with a SplitMix64
// finaliser, no random seed.

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// hashString returns the FNV-1a hash of s, mixed.
func hashString(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return mix64(h)
}

// mix64 is SplitMix64's finaliser: a bijection that spreads every input bit
// over every output bit, so that combining two hashes with xor stays uniform.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// weight is the rendezvous weight of a member for a shard, from their
// precomputed hashes. Higher weights are preferred.
func weight(shardHash, memberHash uint64) uint64 {
	return mix64(shardHash ^ memberHash)
}

// ListDigest names a shard list independently of its order and duplicates:
// "<count>-<hash>", the hash combining each id's FNV-1a hash (mixed), so
// that every member computes the same digest on every platform and in
// every release. Members publish it in their record and deal shards only
// among the members that run the same list: nothing forces members to run
// one list (a rolling deployment changes it member by member), and a shard
// dealt to a member that does not run it would have no leader. Members
// that disagree form groups that each lead their own shards (a shard in
// two groups' lists gets a candidate from each, and its election decides);
// balance holds within each group. A member whose record does not carry a
// digest yet counts as running the same list.
func ListDigest(ids []string) string {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var h uint64
	for _, id := range ids {
		h = mix64(h ^ hashString(id))
	}
	return fmt.Sprintf("%d-%016x", len(ids), h)
}
