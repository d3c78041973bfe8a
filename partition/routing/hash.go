package routing

import "hash/fnv"

// HashKey returns the shard key maps to among shards (nil and "" when
// shards is empty): FNV-1a (64 bits) of key, then jump consistent hash
// (Lamping and Veach, 2014) onto len(shards), as an index into shards.
// The function is fixed and documented so that every router, in any
// language, computes the same shard.
func HashKey(key string, shards []string) string {
	if len(shards) == 0 {
		return ""
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	return shards[jump(h.Sum64(), len(shards))]
}

// jump is Lamping and Veach's jump consistent hash of key onto n buckets.
func jump(key uint64, n int) int {
	var b, j int64 = -1, 0
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}
