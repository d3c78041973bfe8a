package root

import (
	"fmt"
	"maps"
	"testing"
)

// TestLeaderFloorHidesALaggingRecord drives, through a View, the order an
// observer reads records in after shard s moved from a (token 206) to b
// (token 249) and on: b's record claiming s, then dropping it, while a's
// record, read before a republished, still claims s with 206. View.Leaders
// names a again with 206; the floor must hide it (s without a leader) until
// a claim at or above 249 is read, and forget s once no record claims it.
func TestLeaderFloorHidesALaggingRecord(t *testing.T) {
	v := NewView(false)
	v.Apply(Update{Members: map[string]int64{"a": 1, "b": 2, "c": 3}})
	rec := func(id string, sess int64, leading map[string]uint64) {
		v.Apply(Update{Member: id, Rec: &StoredRecord{Record: Record{Session: sess, Leading: leading}}})
	}
	f := NewLeaderFloor()
	step := func(what string, want map[string]Published) {
		t.Helper()
		if got := f.Admit(v.Leaders()); !maps.Equal(got, want) {
			t.Fatalf("%s: admitted %v, want %v (view's leaders %v)", what, got, want, v.Leaders())
		}
	}
	rec("a", 1, map[string]uint64{"s": 206, "t": 7})
	step("a leads s", map[string]Published{"s": {"a", 206}, "t": {"a", 7}})
	rec("b", 2, map[string]uint64{"s": 249})
	step("b's record claims s, a's lags", map[string]Published{"s": {"b", 249}, "t": {"a", 7}})
	rec("b", 2, map[string]uint64{})
	if got := v.Leaders()["s"]; got != (Published{"a", 206}) {
		t.Fatalf("the view names %v for s, want a's stale claim (the fault this floor is for)", got)
	}
	step("b's record dropped s, a's still lags", map[string]Published{"t": {"a", 7}})
	rec("a", 1, map[string]uint64{"s": 206})
	step("t not led any more, a's claim of s still lags", map[string]Published{})
	rec("a", 1, map[string]uint64{"s": 206, "t": 7})
	step("t led again", map[string]Published{"t": {"a", 7}})
	rec("c", 3, map[string]uint64{"s": 300})
	step("c leads s", map[string]Published{"s": {"c", 300}, "t": {"a", 7}})
	rec("a", 1, map[string]uint64{"t": 7})
	rec("c", 3, map[string]uint64{})
	step("no record claims s", map[string]Published{"t": {"a", 7}})
	rec("a", 1, map[string]uint64{"s": 5, "t": 7})
	step("s's election created again, tokens from 5", map[string]Published{"s": {"a", 5}, "t": {"a", 7}})
}

// BenchmarkLeaderFloorAdmit measures Admit beside View.Leaders for 10,000
// shards led by 10 members, the cost each observer step adds.
func BenchmarkLeaderFloorAdmit(b *testing.B) {
	v := NewView(false)
	members := map[string]int64{}
	for m := range 10 {
		id := fmt.Sprintf("m%d", m)
		members[id] = int64(m + 1)
		leading := map[string]uint64{}
		for s := m; s < 10000; s += 10 {
			leading[fmt.Sprintf("shard-%d", s)] = uint64(1000 + s)
		}
		v.Apply(Update{Member: id, Rec: &StoredRecord{Record: Record{Session: int64(m + 1), Leading: leading}}})
	}
	v.Apply(Update{Members: members})
	f := NewLeaderFloor()
	b.Run("Leaders", func(b *testing.B) {
		for b.Loop() {
			_ = v.Leaders()
		}
	})
	b.Run("LeadersAdmitted", func(b *testing.B) {
		for b.Loop() {
			_ = f.Admit(v.Leaders())
		}
	})
}
