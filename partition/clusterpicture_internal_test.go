package partition

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/root/electview"
	"github.com/zkelect/zkelect/zxidfence"
)

// elections is a leaderSource kept by the test: the leaders it sets, and
// the shards it changed since the last TakeChanged.
type elections struct {
	leaders map[string]electview.Leader
	changed []string
}

func (f *elections) TakeChanged() []string {
	c := f.changed
	f.changed = nil
	return c
}

func (f *elections) Leader(s string) (electview.Leader, bool) {
	l, ok := f.leaders[s]
	return l, ok
}

func (f *elections) Published() map[string]rootdata.Published {
	out := make(map[string]rootdata.Published, len(f.leaders))
	for s, l := range f.leaders {
		out[s] = rootdata.Published{Member: l.Member, Token: l.Token}
	}
	return out
}

// set makes member lead s with token (member "": no leader).
func (f *elections) set(s, member string, token uint64) {
	if member == "" {
		delete(f.leaders, s)
	} else {
		f.leaders[s] = electview.Leader{Member: member, Token: zxidfence.Token(token)}
	}
	f.changed = append(f.changed, s)
}

// sameCluster reports whether two pictures are the same, and what
// differs.
func sameCluster(a, b Cluster) (bool, string) {
	if !maps.Equal(a.Leaders, b.Leaders) {
		return false, "leaders"
	}
	if !membersEqual(a.Members, b.Members) {
		return false, "members"
	}
	x, _ := a.Operator.Encode()
	y, _ := b.Operator.Encode()
	if !slices.Equal(x, y) {
		return false, "operator"
	}
	return true, ""
}

// TestPictureIsTheWholePictureAfterEveryStep: random steps over 40 shards
// and 5 members (leaders set and lost, leaders outside the live members,
// members joining and leaving, records with new addresses, labels and
// weights, drains and undrains); after each, the picture kept from what
// changed is the one rebuilt whole from the view and every leader
// (clusterOf), and step reports a change exactly when it differs from the
// picture before.
func TestPictureIsTheWholePictureAfterEveryStep(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		v := rootdata.NewView(false)
		e := &elections{leaders: map[string]electview.Leader{}}
		members := map[string]int64{}
		var p picture
		var prev Cluster
		token := uint64(0)
		for i := range 300 {
			randomStep(rng, v, e, members, &token)
			changed := p.step(v, e)
			want := clusterOf(v, e.Published())
			if ok, what := sameCluster(p.c, want); !ok {
				t.Fatalf("seed %d, step %d: the picture's %s differ from the whole picture's:\n%+v\nwant\n%+v", seed, i, what, p.c, want)
			}
			if differs, _ := sameCluster(prev, want); i > 0 && changed == differs {
				t.Fatalf("seed %d, step %d: step reported changed=%v, the picture before was the same: %v", seed, i, changed, differs)
			}
			if ch := p.change(); changed && !ch.Whole {
				if got, want := sorted(ch.Shards), leadersChanged(prev.Leaders, want.Leaders); !slices.Equal(got, want) {
					t.Fatalf("seed %d, step %d: the change lists shards %v, the leaders changed of %v", seed, i, got, want)
				}
			}
			prev = p.c.Clone()
		}
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// leadersChanged returns, sorted, the shards whose leader differs.
func leadersChanged(old, next map[string]ShardLeader) []string {
	var out []string
	for s, l := range next {
		if o, ok := old[s]; !ok || o != l {
			out = append(out, s)
		}
	}
	for s := range old {
		if _, ok := next[s]; !ok {
			out = append(out, s)
		}
	}
	return sorted(out)
}

// randomStep changes the view or the elections at random.
func randomStep(rng *rand.Rand, v *rootdata.View, e *elections, members map[string]int64, token *uint64) {
	id := "m" + strconv.Itoa(rng.IntN(5))
	switch rng.IntN(10) {
	case 0: // a member joins or leaves
		if _, live := members[id]; live {
			delete(members, id)
		} else {
			members[id] = rng.Int64N(1000) + 1
		}
		v.Apply(rootdata.Update{Members: maps.Clone(members)})
	case 1: // a record: a new address, labels, weight
		r := rootdata.Record{Session: members[id], Address: id + ":" + strconv.Itoa(rng.IntN(3)),
			Labels: map[string]string{"zone": strconv.Itoa(rng.IntN(2))}, Weight: rng.IntN(3)}
		v.Apply(rootdata.Update{Member: id, Rec: &rootdata.StoredRecord{Record: r}})
	case 2: // a drain or an undrain
		st := v.Operator.OperatorState.Clone()
		if st.Drained == nil {
			st.Drained = map[string]rootdata.Note{}
		}
		if _, drained := st.Drained[id]; drained {
			delete(st.Drained, id)
		} else {
			st.Drained[id] = rootdata.Note{Reason: "test"}
		}
		v.Apply(rootdata.Update{Operator: &rootdata.StoredOperator{OperatorState: st, Version: v.Operator.Version + 1}})
	case 3: // a shard loses its leader
		e.set(strconv.Itoa(rng.IntN(40)), "", 0)
	case 4: // a shard's election reported changed, its leader the same
		e.changed = append(e.changed, strconv.Itoa(rng.IntN(40)))
	default: // a shard gets a new leader
		*token++
		e.set(strconv.Itoa(rng.IntN(40)), id, *token)
	}
}

// BenchmarkWatchClusterStep: one step of WatchCluster at 100,000 shards
// over 5 members in which 10 shards' leaders changed (a notification's
// worth), and one in which only a member's record was written again (a
// publish: nothing the picture shows changed):
// "whole" is the picture rebuilt at each step, compared with the last and
// copied for fn (the code before the picture was kept incrementally);
// "incremental+copy" is picture.step and the copy for fn when it changed
// (WatchCluster now); "changes" is picture.step and the change handed to
// fn without a copy (WatchClusterChanges).
func BenchmarkWatchClusterStep(b *testing.B) {
	const n, changes = 100000, 10
	v := rootdata.NewView(false)
	members := map[string]int64{}
	for i := range 5 {
		id := "m" + strconv.Itoa(i)
		members[id] = int64(i + 1)
	}
	v.Apply(rootdata.Update{Members: members})
	for id, sess := range members {
		v.Apply(rootdata.Update{Member: id, Rec: &rootdata.StoredRecord{Record: rootdata.Record{Session: sess, Address: id + ":8080"}}})
	}
	e := &elections{leaders: map[string]electview.Leader{}}
	token := uint64(0)
	for s := range n {
		token++
		e.set(strconv.Itoa(s), "m"+strconv.Itoa(s%5), token)
	}
	change := func(i int) {
		for j := range changes {
			token++
			e.set(strconv.Itoa((i*changes+j)*7919%n), "m"+strconv.Itoa((i+j)%5), token)
		}
	}
	publish := func(i int) { // a record written again (its leading map), nothing the picture shows changed
		v.Apply(rootdata.Update{Member: "m0", Rec: &rootdata.StoredRecord{Record: rootdata.Record{Session: 1, Address: "m0:8080",
			Leading: map[string]uint64{strconv.Itoa(i): uint64(i)}}, Version: int32(i)}})
	}
	for _, what := range []struct {
		name  string
		apply func(int)
	}{{"10 leaders changed", change}, {"a record written", publish}} {
		b.Run(what.name+"/whole", func(b *testing.B) {
			last := clusterOf(v, e.Published())
			b.ResetTimer()
			for i := range b.N {
				what.apply(i)
				e.TakeChanged()
				if c := clusterOf(v, e.Published()); !equalWhole(c, last) {
					last = c
					_ = c.Clone()
				}
			}
		})
		b.Run(what.name+"/incremental+copy", func(b *testing.B) {
			var p picture
			p.step(v, e)
			b.ResetTimer()
			for i := range b.N {
				what.apply(i)
				if p.step(v, e) {
					_ = p.change().Cluster.Clone()
				}
			}
		})
		b.Run(what.name+"/changes", func(b *testing.B) {
			var p picture
			p.step(v, e)
			b.ResetTimer()
			for i := range b.N {
				what.apply(i)
				if p.step(v, e) {
					_ = p.change()
				}
			}
		})
	}
}

// equalWhole is the comparison of whole pictures the code before did.
func equalWhole(a, b Cluster) bool {
	ok, _ := sameCluster(a, b)
	return ok
}
