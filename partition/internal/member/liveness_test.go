package member

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// shards nobody else may take, stay; drained members take none.
func TestDealUnavailableMovesOnlyWhatItsTargetCannotLead(t *testing.T) {
	all := map[string]string{"1": "a", "2": "a", "3": "a", "4": "b", "5": "c", "6": "c", "7": "a", "8": "a"}
	in := assign.Input{
		Members: []string{"a", "b", "c", "d"}, Drained: []string{"d"},
		Current: map[string]string{"2": "c"},
		Pins:    map[string]string{"7": "a"},
	}
	byMember := map[string][]string{"a": {"1", "2", "7", "8"}, "b": {"8"}, "c": {"8"}}
	got := DealUnavailable(all, in, byMember)
	want := map[string]string{"1": "b", "2": "c", "3": "a", "4": "b", "5": "c", "6": "c", "7": "a", "8": "a"}
	for s, m := range want {
		if got[s] != m {
			t.Errorf("shard %s dealt to %q, want %q (all %v)", s, got[s], m, got)
		}
	}
	if all["1"] != "a" {
		t.Errorf("DealUnavailable modified its input")
	}
	if same := DealUnavailable(all, in, nil); !maps.Equal(same, all) {
		t.Errorf("with nothing unavailable the assignment changed: %v", same)
	}
}

// TestUnavailableClearsBySeat: the marks of one seat go when it is up
// again; the others stay.
func TestUnavailableClearsBySeat(t *testing.T) {
	s1, s2 := new(int), new(int)
	u := Unavailable[*int]{}
	u.Mark("a", s1)
	u.Mark("b", s2)
	if u.Mark("a", s2) {
		t.Errorf("a shard marked twice")
	}
	if !u.ClearSeat(s1) || !slices.Equal(u.List(), []string{"b"}) {
		t.Errorf("after s1 is up: %v, want [b]", u.List())
	}
}

// TestUnseatedExpiresEachShardAtItsTime: a shard whose election found no
// session counts as unavailable until its own deadline; expire reports
// the earliest deadline left.
func TestUnseatedExpiresEachShardAtItsTime(t *testing.T) {
	t0 := time.Unix(1000, 0)
	u := Unseated{}
	u.Mark("a", t0.Add(time.Second))
	u.Mark("b", t0.Add(2*time.Second))
	if changed, next := u.Expire(t0.Add(999 * time.Millisecond)); changed || !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("before a's time: changed %v, next %v", changed, next)
	}
	if changed, next := u.Expire(t0.Add(time.Second)); !changed || !next.Equal(t0.Add(2*time.Second)) || len(u) != 1 {
		t.Fatalf("at a's time: changed %v, next %v, left %v", changed, next, u)
	}
	if changed, next := u.Expire(t0.Add(2 * time.Second)); !changed || !next.IsZero() || len(u) != 0 {
		t.Fatalf("at b's time: changed %v, next %v, left %v", changed, next, u)
	}
}

// TestCoreUnavailable: the record's unavailable shards are those on a
// down seat and the unseated ones, once each, sorted.
func TestCoreUnavailable(t *testing.T) {
	c := NewCore[int](Config{})
	if got := c.Unavailable(); got != nil {
		t.Fatalf("none marked: %v, want nil", got)
	}
	c.Unavail.Mark("b", 1)
	c.Unavail.Mark("d", 1)
	c.Unseated.Mark("a", time.Unix(1, 0))
	c.Unseated.Mark("d", time.Unix(1, 0))
	if got, want := c.Unavailable(), []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}
