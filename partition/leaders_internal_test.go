package partition

import (
	"maps"
	"slices"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

// TestViewLeaders: only live members' current records publish leaders;
// the larger token wins a shard two records claim; a final record's
// reservations (token 0) are not leaderships.
func TestViewLeaders(t *testing.T) {
	v := newView(true)
	v.apply(update{members: map[string]int64{"a": 1, "b": 2, "c": 3}})
	for id, r := range map[string]record{
		"a":    {Session: 1, Leading: map[string]uint64{"s1": 10, "s2": 20, "s3": 0}},
		"b":    {Session: 2, Leading: map[string]uint64{"s2": 25}},           // took s2 over; a's record lags
		"c":    {Session: 9, Leading: map[string]uint64{"s4": 40}},           // written by c's earlier session
		"gone": {Session: 4, Leading: map[string]uint64{"s5": 50, "s1": 60}}, // not live
	} {
		v.apply(update{member: id, rec: &storedRecord{record: r}})
	}
	want := map[string]published{"s1": {"a", 10}, "s2": {"b", 25}}
	if got := v.leaders(); !maps.Equal(got, want) {
		t.Fatalf("leaders %v, want %v", got, want)
	}
}

func TestChangedShards(t *testing.T) {
	old := map[string]published{"a": {"m1", 1}, "b": {"m1", 2}, "c": {"m2", 3}}
	next := map[string]published{"a": {"m1", 1}, "b": {"m2", 4}, "d": {"m2", zxidfence.Token(5)}}
	if got, want := changedShards(old, next), []string{"b", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("changed %v, want %v", got, want)
	}
}
