package partition

import (
	"fmt"
	"testing"
)

// benchView is a view of 3 live members leading 10,000 shards between
// them, as at the end of a cold start.
func benchView() (*view, []string) {
	v := newView(true)
	v.apply(update{members: map[string]int64{"m0": 1, "m1": 2, "m2": 3}})
	shards := Range(0, 10000)
	recs := []record{{Session: 1}, {Session: 2}, {Session: 3}}
	for i := range recs {
		recs[i].Leading = map[string]uint64{}
	}
	for i, s := range shards {
		recs[i%3].Leading[s] = uint64(i + 1)
	}
	for i, r := range recs {
		v.apply(update{member: fmt.Sprintf("m%d", i), rec: &storedRecord{record: r}})
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
			_ = v.leaders()
		}
	})
	b.Run("leaders+diff", func(b *testing.B) {
		prev := v.leaders()
		for range b.N {
			_ = changedShards(prev, v.leaders())
		}
	})
	b.Run("current+assign", func(b *testing.B) {
		members := v.liveMembers()
		for range b.N {
			cur, tokens := v.current(nil)
			_ = Assign(Input{Shards: shards, Members: members, Current: cur, Tokens: tokens})
		}
	})
}
