package root

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// randomRecord draws a record of session 1 or 2 leading and reserving
// shards of the pool with tokens that often tie.
func randomRecord(r *rand.Rand, pool []string) Record {
	rec := Record{Session: int64(1 + r.IntN(2)), Leading: map[string]uint64{}}
	for _, s := range pool {
		switch r.IntN(8) {
		case 0:
			rec.Leading[s] = uint64(r.IntN(6))
		case 1:
			rec.Reserved = append(rec.Reserved, s)
		}
	}
	return rec
}

// TestViewHolderEqualsCurrent drives a tracked View through random
// updates (live members and their sessions, records written and deleted,
// its own record set, changed in place and unset) and checks after each
// that Holder gives every shard Current's holder and token, and that a
// map kept only from Changed equals Current's.
func TestViewHolderEqualsCurrent(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 32))
			pool := make([]string, 12+r.IntN(20))
			for i := range pool {
				pool[i] = fmt.Sprintf("s%d", i)
			}
			ids := []string{"a", "b", "c", "d", "me"}
			v := NewView(seed%3 != 0)
			if seed%2 == 0 {
				v.Track() // on an empty view; the others track a view with records
			}
			var own *MemberRecord
			kept := map[string]claim{}
			for step := range 300 {
				switch op := r.IntN(10); {
				case op == 0:
					v.Apply(Update{Members: randomLive(r, ids)})
				case op == 1:
					v.Apply(Update{Member: ids[r.IntN(len(ids))]})
				case op == 2 && v.idx != nil:
					own = nil
					v.SetOwn(nil)
				case op <= 4 && v.idx != nil:
					if own == nil || r.IntN(2) == 0 {
						own = &MemberRecord{ID: "me", Record: randomRecord(r, pool)}
					} else { // the loop changes its leading map in place
						s := pool[r.IntN(len(pool))]
						if r.IntN(2) == 0 {
							delete(own.Leading, s)
						} else {
							own.Leading[s] = uint64(r.IntN(6))
						}
						own.Session = int64(1 + r.IntN(2))
					}
					v.SetOwn(own)
				default:
					rec := randomRecord(r, pool)
					v.Apply(Update{Member: ids[r.IntN(len(ids))], Rec: &StoredRecord{Record: rec}})
				}
				if v.idx == nil {
					if step < 20 {
						continue
					}
					v.Track()
				}
				cur, tokens := v.Current(own)
				v.Changed(func(s, m string, tok uint64, held bool) {
					if held {
						kept[s] = claim{m, tok}
					} else {
						delete(kept, s)
					}
				})
				want := map[string]claim{}
				for s, m := range cur {
					want[s] = claim{m, tokens[s]}
				}
				if !maps.Equal(kept, want) {
					t.Fatalf("step %d: holders kept from Changed %v, Current says %v", step, kept, want)
				}
				for _, s := range pool {
					m, tok, ok := v.Holder(s)
					if w, held := want[s]; held != ok || (ok && (w.member != m || w.token != tok)) {
						t.Fatalf("step %d: Holder(%s) = %q %d %v, Current says %v %v", step, s, m, tok, ok, w, held)
					}
				}
			}
		})
	}
}

// randomLive returns a random live set of ids for the views' property
// tests: each id live with probability 3/4, under session 1 or 2.
func randomLive(r *rand.Rand, ids []string) map[string]int64 {
	live := map[string]int64{}
	for _, id := range ids {
		if r.IntN(4) > 0 {
			live[id] = int64(1 + r.IntN(2))
		}
	}
	return live
}
