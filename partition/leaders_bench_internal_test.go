package partition

import (
	"fmt"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// benchView is a view of 3 live members leading 10,000 shards between
// them, as at the end of a cold start.
func benchView() (*rootdata.View, []string) {
	v := rootdata.NewView(true)
	v.Apply(rootdata.Update{Members: map[string]int64{"m0": 1, "m1": 2, "m2": 3}})
	shards := Range(0, 10000)
	recs := []rootdata.Record{{Session: 1}, {Session: 2}, {Session: 3}}
	for i := range recs {
		recs[i].Leading = map[string]uint64{}
	}
	for i, s := range shards {
		recs[i%3].Leading[s] = uint64(i + 1)
	}
	for i, r := range recs {
		v.Apply(rootdata.Update{Member: fmt.Sprintf("m%d", i), Rec: &rootdata.StoredRecord{Record: r}})
	}
	return v, shards
}

// BenchmarkStepParts compares, at 10,000 shards, what a step with
// OnLeaderChanged set adds (view.leaders and the notifier's diff) with
// what every dirty step costs anyway (view.current and Assign):
//
//	go test -run '^$' -bench BenchmarkStepParts ./partition
func BenchmarkStepParts(b *testing.B) {
	v, shards := benchView()
	b.Run("leaders", func(b *testing.B) {
		for range b.N {
			_ = v.Leaders()
		}
	})
	b.Run("leaders+diff", func(b *testing.B) {
		prev := v.Leaders()
		for range b.N {
			_ = changedShards(prev, v.Leaders())
		}
	})
	b.Run("current+assign", func(b *testing.B) {
		members := v.LiveMembers()
		for range b.N {
			cur, tokens := v.Current(nil)
			_ = assign.Assign(assign.Input{Shards: shards, Members: members, Current: cur, Tokens: tokens})
		}
	})
}
