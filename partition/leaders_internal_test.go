package partition

import (
	"maps"
	"slices"
	"testing"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/zxidfence"
)

// TestViewLeaders: only live members' current records publish leaders;
// the larger token wins a shard two records claim; a final record's
// reservations (token 0) are not leaderships.
func TestViewLeaders(t *testing.T) {
	v := rootdata.NewView(true)
	v.Apply(rootdata.Update{Members: map[string]int64{"a": 1, "b": 2, "c": 3}})
	for id, r := range map[string]rootdata.Record{
		"a":    {Session: 1, Leading: map[string]uint64{"s1": 10, "s2": 20, "s3": 0}},
		"b":    {Session: 2, Leading: map[string]uint64{"s2": 25}},           // took s2 over; a's record lags
		"c":    {Session: 9, Leading: map[string]uint64{"s4": 40}},           // written by c's earlier session
		"gone": {Session: 4, Leading: map[string]uint64{"s5": 50, "s1": 60}}, // not live
	} {
		v.Apply(rootdata.Update{Member: id, Rec: &rootdata.StoredRecord{Record: r}})
	}
	want := map[string]rootdata.Published{"s1": {Member: "a", Token: 10}, "s2": {Member: "b", Token: 25}}
	if got := v.Leaders(); !maps.Equal(got, want) {
		t.Fatalf("leaders %v, want %v", got, want)
	}
}

func TestChangedShards(t *testing.T) {
	old := map[string]rootdata.Published{"a": {Member: "m1", Token: 1}, "b": {Member: "m1", Token: 2}, "c": {Member: "m2", Token: 3}}
	next := map[string]rootdata.Published{"a": {Member: "m1", Token: 1}, "b": {Member: "m2", Token: 4}, "d": {Member: "m2", Token: zxidfence.Token(5)}}
	if got, want := changedShards(old, next), []string{"b", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("changed %v, want %v", got, want)
	}
}
