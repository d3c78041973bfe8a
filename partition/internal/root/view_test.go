package root

import (
	"maps"
	"testing"
)

// TestViewCurrentPrecedence: a reservation (an absent member's record, a
// record of an earlier session, a reserved list) holds its shard whatever
// the leaders' tokens; among the leaders of a shard the larger token wins,
// then the smaller member id.
func TestViewCurrentPrecedence(t *testing.T) {
	v := NewView(true)
	v.Apply(Update{Members: map[string]int64{"a": 1, "b": 2, "d": 4, "e": 5, "f": 6}})
	for id, r := range map[string]Record{
		"a": {Session: 1, Leading: map[string]uint64{"s1": 10, "s2": 20}},
		"b": {Session: 2, Leading: map[string]uint64{"s2": 25, "s3": 5}, Reserved: []string{"s4"}},
		"c": {Session: 3, Leading: map[string]uint64{"s1": 5, "s5": 7}}, // absent: within its grace
		"d": {Session: 9, Leading: map[string]uint64{"s3": 3}},          // written by an earlier session
		"e": {Session: 5, Leading: map[string]uint64{"s6": 0}},
		"f": {Session: 6, Leading: map[string]uint64{"s6": 0, "s4": 30}},
	} {
		v.Apply(Update{Member: id, Rec: &StoredRecord{Record: r}})
	}
	cur, tokens := v.Current(nil)
	wantCur := map[string]string{"s1": "c", "s2": "b", "s3": "d", "s4": "b", "s5": "c", "s6": "e"}
	wantTok := map[string]uint64{"s1": 5, "s2": 25, "s3": 3, "s4": 0, "s5": 7, "s6": 0}
	if !maps.Equal(cur, wantCur) || !maps.Equal(tokens, wantTok) {
		t.Fatalf("current() = %v, %v; want %v, %v", cur, tokens, wantCur, wantTok)
	}
}
