package bench

import (
	"fmt"
	"strings"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
)

// This file names the shards scenario's shards (Config.ShardIDs) and sizes
// the servers' heap for them.

// shardIDs returns the ids of n shards: format applied to 0..n-1, or
// partition.Range's decimal numbers when format is empty.
func shardIDs(format string, n int) []string {
	if format == "" {
		return partition.Range(0, n)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf(format, i)
	}
	return ids
}

// checkShardIDs returns a *ConfigError for a ShardIDs format that has not
// exactly one verb, gives the same id for two numbers, or an id
// partition.ValidateID refuses (the last of maxShards checked too: the
// longest).
func checkShardIDs(format string) error {
	if format == "" {
		return nil
	}
	bad := func(reason string) error { return &ConfigError{Field: "ShardIDs", Value: format, Reason: reason} }
	if strings.Count(strings.ReplaceAll(format, "%%", ""), "%") != 1 {
		return bad("want exactly one integer verb, such as shard-%07d")
	}
	first, second, last := fmt.Sprintf(format, 0), fmt.Sprintf(format, 1), fmt.Sprintf(format, maxShards-1)
	if first == second || strings.Contains(first, "%!") {
		return bad("does not format an integer into distinct ids")
	}
	for _, id := range []string{first, last} {
		if err := partition.ValidateID(id); err != nil {
			return bad(err.Error())
		}
	}
	return nil
}

// serverHeap is each server's -Xmx for a shards scenario of up to n
// shards: testenv's default below boundSteps, 1 GiB up to 166,666 shards
// (100,000 shards are 200,000 znodes and as many watches), and 6 KB a
// shard above (a bound from the 50,000-shard run's JVM heap, which
// measured about 1.5 KB of live heap a shard; see bench/README.md).
func serverHeap(n int) string {
	switch {
	case n < boundSteps:
		return testenv.DefaultHeap
	case n*6 <= 1000*1000:
		return boundHeap
	default:
		return fmt.Sprintf("%dm", n*6/1000)
	}
}
