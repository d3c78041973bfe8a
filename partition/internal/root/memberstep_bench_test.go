package root

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// These benchmarks drive a View and an assign.Assigner as a member's loop
// step does (partition's loopassign.go): an update applied, our own record
// set, the changed holders fed, the assignment computed and our share
// read. A fleet starts balanced (shard i led by member i mod M); member
// m00000 is ours. The 10,000,000-shard fleets take minutes and several
// GB to set up: they run only with ZKELECT_BENCH_HUGE=1.

// benchFleet is one member's view of a balanced fleet.
type benchFleet struct {
	shards  []string
	members map[string]int64
	records map[string]Record // as read
	alt     map[string]Record // member 1's record with one token renewed
	view    *View
	a       *assign.Assigner
	own     *MemberRecord
	params  assign.Params
}

func benchMember(i int) string { return fmt.Sprintf("m%05d", i) }

// lastFleet keeps the fleet of the benchmark running: testing runs a
// benchmark's function once with b.N 1 before the measured run, and a
// 1,000,000-shard fleet takes seconds to build. One at a time, for memory.
var lastFleet struct {
	key string
	f   *benchFleet
}

func newBenchFleet(b *testing.B, shards, members int, incremental bool) *benchFleet {
	b.Helper()
	key := fmt.Sprint(shards, members, incremental)
	if lastFleet.key == key {
		return lastFleet.f
	}
	lastFleet.key, lastFleet.f = "", nil
	runtime.GC()
	f := buildFleet(shards, members, incremental)
	runtime.GC() // the build's garbage is not the steps' cost
	lastFleet.key, lastFleet.f = key, f
	return f
}

func buildFleet(shards, members int, incremental bool) *benchFleet {
	f := &benchFleet{shards: make([]string, shards), members: map[string]int64{}, records: map[string]Record{}, alt: map[string]Record{}}
	for m := range members {
		id := benchMember(m)
		f.members[id] = int64(m + 1)
		f.records[id] = Record{Session: int64(m + 1), Leading: make(map[string]uint64, shards/members+1)}
		f.params.Members = append(f.params.Members, id)
	}
	for i := range f.shards {
		s := fmt.Sprintf("shard-%08d", i)
		f.shards[i] = s
		f.records[benchMember(i%members)].Leading[s] = uint64(i + 1)
	}
	if members > 1 { // the member whose record changes (benchMember(1))
		id := benchMember(1)
		alt := f.records[id]
		alt.Leading = maps.Clone(alt.Leading)
		for s, tok := range alt.Leading {
			alt.Leading[s] = tok + uint64(shards) // one shard's leadership renewed
			break
		}
		f.alt[id] = alt
	}
	f.view = NewView(true)
	f.view.Apply(Update{Members: f.members})
	for id, r := range f.records {
		f.view.Apply(Update{Member: id, Rec: &StoredRecord{Record: r}})
	}
	me := benchMember(0)
	f.own = &MemberRecord{ID: me, Record: Record{Session: 1, Leading: maps.Clone(f.records[me].Leading)}}
	if incremental {
		f.view.Track()
		f.a = assign.NewAssigner()
		f.a.SetShards(f.shards)
		f.step()
	}
	return f
}

// step is a member's step after a change: what loopassign.go's
// assignment and concerningUsOf do.
func (f *benchFleet) step() map[string]string {
	f.view.SetOwn(f.own)
	f.view.Changed(func(s, m string, tok uint64, held bool) {
		if held {
			f.a.Hold(s, m, tok)
		} else {
			f.a.Release(s)
		}
	})
	res := f.a.Targets(f.params)
	me := f.own.ID
	out := make(map[string]string, res.Count(me))
	res.Of(me, func(s string) bool {
		out[s] = me
		return true
	})
	return out
}

// fullStep is the step before: Current over every record, Assign over
// every shard, one pass over its map for our share.
func (f *benchFleet) fullStep() map[string]string {
	cur, tokens := f.view.Current(f.own)
	all := assign.Assign(assign.Input{Shards: f.shards, Members: f.params.Members, Current: cur, Tokens: tokens})
	me, out := f.own.ID, map[string]string{}
	for s, m := range all {
		if m == me {
			out[s] = m
		}
	}
	return out
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // cannot fail for RUSAGE_SELF
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report reports the CPU a step (the process's, garbage collection
// included: on a loaded machine wall time is not the step's cost) and the
// live heap after a collection, in MB. Call it after the loop
// (ResetTimer drops reported metrics).
func report(b *testing.B, cpu0 time.Duration) {
	b.Helper()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB")
}

type fleetSize struct{ shards, members int }

func (s fleetSize) String() string { return fmt.Sprintf("%d/%d", s.shards, s.members) }

func fleets(b *testing.B, sizes ...fleetSize) []fleetSize {
	var out []fleetSize
	for _, s := range sizes {
		if s.shards >= 10_000_000 && os.Getenv("ZKELECT_BENCH_HUGE") == "" {
			continue
		}
		out = append(out, s)
	}
	return out
}

var (
	// stepFleets are the three fleets.
	stepFleets = []fleetSize{{100_000, 5}, {1_000_000, 100}, {10_000_000, 1_000}}
	// shareFleets keep our share at 10,000 shards as the fleet grows.
	shareFleets = []fleetSize{{100_000, 10}, {1_000_000, 100}, {10_000_000, 1_000}}
	// ownShares grow our share at 1,000,000 shards: 1,000, 10,000, 50,000.
	ownShares = []fleetSize{{1_000_000, 1_000}, {1_000_000, 100}, {1_000_000, 20}}
)

// BenchmarkMemberStepRecordChange: another member's record is written
// again (one leadership renewed, alternately), and our step follows it.
func BenchmarkMemberStepRecordChange(b *testing.B) {
	for _, group := range [][]fleetSize{stepFleets, shareFleets, ownShares} {
		for _, sz := range fleets(b, group...) {
			b.Run(sz.String(), func(b *testing.B) {
				f := newBenchFleet(b, sz.shards, sz.members, true)
				benchRecordChanges(b, f, func() { f.step() })
			})
		}
	}
}

// BenchmarkMemberStepJoinLeave: a member joins (every member gives up its
// excess, dealt to it) and leaves again (its reservations... none: it led
// nothing yet, so its shards are dealt back), one change an iteration.
func BenchmarkMemberStepJoinLeave(b *testing.B) {
	for _, sz := range fleets(b, stepFleets...) {
		b.Run(sz.String(), func(b *testing.B) {
			f := newBenchFleet(b, sz.shards, sz.members, true)
			joined := maps.Clone(f.members)
			joined["zz-joiner"] = int64(sz.members + 1)
			without := f.params.Members
			with := append(append([]string(nil), without...), "zz-joiner")
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := range b.N {
				if i%2 == 0 {
					f.view.Apply(Update{Members: joined})
					f.params.Members = with
				} else {
					f.view.Apply(Update{Members: f.members})
					f.params.Members = without
				}
				f.step()
			}
			b.StopTimer()
			report(b, cpu0)
			runtime.KeepAlive(f)
		})
	}
}

// BenchmarkMemberStepFull is the step before the Assigner (View.Current
// and assign.Assign over every shard) on a record change, for comparison;
// 10,000,000 shards are left out (28 s a step).
func BenchmarkMemberStepFull(b *testing.B) {
	for _, sz := range stepFleets[:2] {
		b.Run(sz.String(), func(b *testing.B) {
			f := newBenchFleet(b, sz.shards, sz.members, false)
			benchRecordChanges(b, f, func() { f.fullStep() })
		})
	}
}

// benchRecordChanges times b.N steps, each after another member's record
// is written again (its two versions in turn), and reports their CPU.
func benchRecordChanges(b *testing.B, f *benchFleet, step func()) {
	other := benchMember(1)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		r := f.records[other]
		if i%2 == 0 {
			r = f.alt[other]
		}
		f.view.Apply(Update{Member: other, Rec: &StoredRecord{Record: r}})
		step()
	}
	b.StopTimer()
	report(b, cpu0)
	runtime.KeepAlive(f)
}

// BenchmarkMemberJoin is a member's join into a balanced fleet, in
// process: a new View (told the shards it runs) and Assigner, the first
// step (Track, TrackLeaders, the whole shard list), then every other
// member's record applied as the watchers read them, one at a time, and
// the step after them (the holders Changed fed to the Assigner, the
// assignment, our share, the leaders' changes through a LeaderFloor): the
// O(fleet) part of a join's time (bench/README.md, the fleet simulation).
func BenchmarkMemberJoin(b *testing.B) {
	for _, sz := range fleets(b, fleetSize{100_000, 10}, fleetSize{1_000_000, 100}) {
		b.Run(sz.String(), func(b *testing.B) {
			f := newBenchFleet(b, sz.shards, sz.members, false)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for range b.N {
				benchJoin(f)
			}
			b.StopTimer()
			report(b, cpu0)
			runtime.KeepAlive(f)
		})
	}
}

// benchJoin joins f's fleet as a new member (f.own's id, no record yet).
func benchJoin(f *benchFleet) {
	v := NewView(true)
	v.Expect(len(f.shards))
	v.Apply(Update{Members: f.members})
	a := assign.NewAssigner()
	floor := NewLeaderFloor()
	own := &MemberRecord{ID: f.own.ID, Record: Record{Session: 1, Leading: map[string]uint64{}}}
	step := func() {
		v.TrackLeaders()
		v.LeaderChanges(func(s string, p Published) { floor.AdmitOne(s, p) })
		v.SetOwn(own)
		v.Changed(func(s, m string, tok uint64, held bool) {
			if held {
				a.Hold(s, m, tok)
			} else {
				a.Release(s)
			}
		})
		res := a.Targets(f.params)
		res.Of(own.ID, func(string) bool { return true })
	}
	a.SetShards(f.shards)
	step()
	for id, r := range f.records {
		if id != own.ID {
			v.Apply(Update{Member: id, Rec: &StoredRecord{Record: r}})
		}
	}
	step()
}
