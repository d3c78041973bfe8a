package partition

import (
	"github.com/zkelect/zkelect/partition/internal/shard"

	"maps"
	"slices"
	"testing"
	"time"
)

// TestSeatHealthDownHalfATimeoutAfterTheLease: a session seen without a
// connection is down half a timeout after its lease ran out (or a timeout
// after it was first seen so, if that is sooner), and not before; it is
// up again the moment it is connected.
func TestSeatHealthDownHalfATimeoutAfterTheLease(t *testing.T) {
	t0, timeout := time.Unix(1000, 0), time.Second
	var h seatHealth
	lease := t0.Add(800 * time.Millisecond)
	if down, at := h.observe(t0, true, lease, true, timeout); down || !at.IsZero() {
		t.Fatalf("connected: down %v, look again at %v; want up, no look", down, at)
	}
	down, at := h.observe(t0.Add(700*time.Millisecond), false, time.Time{}, false, timeout)
	if want := lease.Add(timeout / 2); down || !at.Equal(want) {
		t.Fatalf("just cut off: down %v, at %v; want up until %v", down, at, want)
	}
	if down, _ := h.observe(lease.Add(timeout/2-time.Millisecond), false, time.Time{}, false, timeout); down {
		t.Fatalf("down before half a timeout after the lease")
	}
	if down, _ := h.observe(lease.Add(timeout/2), false, time.Time{}, false, timeout); !down {
		t.Fatalf("not down half a timeout after the lease")
	}
	if down, _ := h.observe(lease.Add(5*time.Second), true, lease.Add(6*time.Second), true, timeout); down {
		t.Fatalf("down although connected again")
	}
}

// TestSeatHealthMarksOnceThenEveryPeriod: a down session's shards are
// marked when it goes down, then at most once a period, and at once again
// after it was up in between.
func TestSeatHealthMarksOnceThenEveryPeriod(t *testing.T) {
	t0, every := time.Unix(1000, 0), 500*time.Millisecond
	var h seatHealth
	if !h.dueMark(t0, every) || h.dueMark(t0.Add(every-time.Millisecond), every) || !h.dueMark(t0.Add(every), every) {
		t.Fatalf("marks not once then every %v", every)
	}
	h.observe(t0.Add(every+time.Millisecond), true, time.Time{}, false, time.Second)
	if !h.dueMark(t0.Add(every+2*time.Millisecond), every) {
		t.Fatalf("not marked at once after being up in between")
	}
}

// TestSeatHealthWithoutALeaseCountsATimeout: a session with no lease
// known (expired, not replaced) is down a timeout after it was first seen
// without a connection.
func TestSeatHealthWithoutALeaseCountsATimeout(t *testing.T) {
	t0, timeout := time.Unix(1000, 0), time.Second
	var h seatHealth
	if down, at := h.observe(t0, false, time.Time{}, false, timeout); down || !at.Equal(t0.Add(timeout)) {
		t.Fatalf("first seen cut off: down %v, at %v; want up until %v", down, at, t0.Add(timeout))
	}
	if down, _ := h.observe(t0.Add(timeout), false, time.Time{}, false, timeout); !down {
		t.Fatalf("not down a timeout after it was first seen cut off")
	}
}

// TestDealUnavailableMovesOnlyWhatItsTargetCannotLead: a shard whose
// target lists it unavailable goes to its current holder if that may take
// it, else to the member with the fewest shards; pinned shards, and
// shards nobody else may take, stay; drained members take none.
func TestDealUnavailableMovesOnlyWhatItsTargetCannotLead(t *testing.T) {
	all := map[string]string{"1": "a", "2": "a", "3": "a", "4": "b", "5": "c", "6": "c", "7": "a", "8": "a"}
	in := Input{
		Members: []string{"a", "b", "c", "d"}, Drained: []string{"d"},
		Current: map[string]string{"2": "c"},
		Pins:    map[string]string{"7": "a"},
	}
	byMember := map[string][]string{"a": {"1", "2", "7", "8"}, "b": {"8"}, "c": {"8"}}
	got := dealUnavailable(all, in, byMember)
	want := map[string]string{"1": "b", "2": "c", "3": "a", "4": "b", "5": "c", "6": "c", "7": "a", "8": "a"}
	for s, m := range want {
		if got[s] != m {
			t.Errorf("shard %s dealt to %q, want %q (all %v)", s, got[s], m, got)
		}
	}
	if all["1"] != "a" {
		t.Errorf("dealUnavailable modified its input")
	}
	if same := dealUnavailable(all, in, nil); !maps.Equal(same, all) {
		t.Errorf("with nothing unavailable the assignment changed: %v", same)
	}
}

// TestUnavailableClearsBySeat: the marks of one seat go when it is up
// again; the others stay.
func TestUnavailableClearsBySeat(t *testing.T) {
	s1, s2 := &shard.Seat{}, &shard.Seat{}
	u := unavailable{}
	u.mark("a", s1)
	u.mark("b", s2)
	if u.mark("a", s2) {
		t.Errorf("a shard marked twice")
	}
	if !u.clearSeat(s1) || !slices.Equal(u.list(), []string{"b"}) {
		t.Errorf("after s1 is up: %v, want [b]", u.list())
	}
}

// TestUnseatedExpiresEachShardAtItsTime: a shard whose election found no
// session counts as unavailable until its own deadline; expire reports
// the earliest deadline left.
func TestUnseatedExpiresEachShardAtItsTime(t *testing.T) {
	t0 := time.Unix(1000, 0)
	u := unseated{}
	u.mark("a", t0.Add(time.Second))
	u.mark("b", t0.Add(2*time.Second))
	if changed, next := u.expire(t0.Add(999 * time.Millisecond)); changed || !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("before a's time: changed %v, next %v", changed, next)
	}
	if changed, next := u.expire(t0.Add(time.Second)); !changed || !next.Equal(t0.Add(2*time.Second)) || len(u) != 1 {
		t.Fatalf("at a's time: changed %v, next %v, left %v", changed, next, u)
	}
	if changed, next := u.expire(t0.Add(2 * time.Second)); !changed || !next.IsZero() || len(u) != 0 {
		t.Fatalf("at b's time: changed %v, next %v, left %v", changed, next, u)
	}
}
