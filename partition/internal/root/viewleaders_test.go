package root

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// TestViewLeaderChangesFollowLeaders drives a View through random updates
// (live members and their sessions, records written and deleted), the
// leaders tracked from the start, from an empty view, or from a view that
// already has records, and checks after each step that a map kept only
// from LeaderChanges equals Leaders, and that a stream admitted through
// AdmitOne shard by shard equals Admit's over the whole map.
func TestViewLeaderChangesFollowLeaders(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 33))
			pool := make([]string, 12+r.IntN(20))
			for i := range pool {
				pool[i] = fmt.Sprintf("s%d", i)
			}
			ids := []string{"a", "b", "c", "d"}
			v := NewView(seed%3 != 0)
			if seed%2 == 0 {
				v.TrackLeaders()
			}
			kept, admitted := map[string]Published{}, map[string]Published{}
			whole, one := NewLeaderFloor(), NewLeaderFloor()
			for step := range 300 {
				switch op := r.IntN(10); {
				case op == 0:
					v.Apply(Update{Members: randomLive(r, ids)})
				case op == 1:
					v.Apply(Update{Member: ids[r.IntN(len(ids))]})
				default:
					v.Apply(Update{Member: ids[r.IntN(len(ids))], Rec: &StoredRecord{Record: randomRecord(r, pool)}})
				}
				if step < 20 && seed%2 == 1 {
					continue
				}
				v.TrackLeaders()
				v.LeaderChanges(func(s string, p Published) {
					if p == (Published{}) {
						delete(kept, s)
					} else {
						kept[s] = p
					}
					if a := one.AdmitOne(s, p); a == (Published{}) {
						delete(admitted, s)
					} else {
						admitted[s] = a
					}
				})
				want := v.Leaders()
				if !maps.Equal(kept, want) {
					t.Fatalf("step %d: leaders kept from LeaderChanges %v, Leaders says %v", step, kept, want)
				}
				if want := whole.Admit(want); !maps.Equal(admitted, want) {
					t.Fatalf("step %d: admitted shard by shard %v, Admit of the whole %v", step, admitted, want)
				}
			}
		})
	}
}

// TestLeaderChangesCostTheChange checks that after the first report only
// the shards a record write changed are reported again.
func TestLeaderChangesCostTheChange(t *testing.T) {
	v := NewView(true)
	v.Apply(Update{Members: map[string]int64{"a": 1, "b": 2}})
	a := map[string]uint64{}
	for i := range 1000 {
		a[fmt.Sprint(i)] = uint64(10 + i)
	}
	v.Apply(Update{Member: "a", Rec: &StoredRecord{Record: Record{Session: 1, Leading: a}}})
	v.TrackLeaders()
	n := 0
	v.LeaderChanges(func(string, Published) { n++ })
	if n != 1000 {
		t.Fatalf("first LeaderChanges reported %d shards, want all 1000", n)
	}
	next := maps.Clone(a)
	next["7"] = 5000
	v.Apply(Update{Member: "a", Rec: &StoredRecord{Record: Record{Session: 1, Leading: next}}})
	var got []string
	v.LeaderChanges(func(s string, p Published) {
		got = append(got, s)
		if p != (Published{"a", 5000}) {
			t.Errorf("shard %s reported with %v, want a 5000", s, p)
		}
	})
	if len(got) != 1 || got[0] != "7" {
		t.Fatalf("after one renewed leadership LeaderChanges reported %v, want [7]", got)
	}
}
