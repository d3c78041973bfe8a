package cli

import (
	"sort"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file reads a root's owners the way the demo, the tests and watch
// list them: shards in order, leaderships per member.

// sortedShards returns the keys of m in shard order.
func sortedShards[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return shardLess(out[i], out[j]) })
	return out
}

// leadCounts returns how many shards each member leads; unled shards count
// under "".
func leadCounts(o map[string]partition.Owner) map[string]int {
	n := map[string]int{}
	for _, ow := range o {
		n[ow.Member]++
	}
	return n
}

// ledBy returns the shards member leads, with their tokens.
func ledBy(o map[string]partition.Owner, member string) map[string]zxidfence.Token {
	out := map[string]zxidfence.Token{}
	for s, ow := range o {
		if ow.Member == member {
			out[s] = ow.Token
		}
	}
	return out
}
