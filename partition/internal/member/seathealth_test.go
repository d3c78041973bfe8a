package member

import (
	"reflect"
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
	var h SeatHealth
	lease := t0.Add(800 * time.Millisecond)
	if down, at := h.Observe(t0, true, lease, true, timeout); down || !at.IsZero() {
		t.Fatalf("connected: down %v, look again at %v; want up, no look", down, at)
	}
	down, at := h.Observe(t0.Add(700*time.Millisecond), false, time.Time{}, false, timeout)
	if want := lease.Add(timeout / 2); down || !at.Equal(want) {
		t.Fatalf("just cut off: down %v, at %v; want up until %v", down, at, want)
	}
	if down, _ := h.Observe(lease.Add(timeout/2-time.Millisecond), false, time.Time{}, false, timeout); down {
		t.Fatalf("down before half a timeout after the lease")
	}
	if down, _ := h.Observe(lease.Add(timeout/2), false, time.Time{}, false, timeout); !down {
		t.Fatalf("not down half a timeout after the lease")
	}
	if down, _ := h.Observe(lease.Add(5*time.Second), true, lease.Add(6*time.Second), true, timeout); down {
		t.Fatalf("down although connected again")
	}
}

// TestSeatHealthMarksOnceThenEveryPeriod: a down session's shards are
// marked when it goes down, then at most once a period, and at once again
// after it was up in between.
func TestSeatHealthMarksOnceThenEveryPeriod(t *testing.T) {
	t0, every := time.Unix(1000, 0), 500*time.Millisecond
	var h SeatHealth
	if !h.DueMark(t0, every) || h.DueMark(t0.Add(every-time.Millisecond), every) || !h.DueMark(t0.Add(every), every) {
		t.Fatalf("marks not once then every %v", every)
	}
	h.Observe(t0.Add(every+time.Millisecond), true, time.Time{}, false, time.Second)
	if !h.DueMark(t0.Add(every+2*time.Millisecond), every) {
		t.Fatalf("not marked at once after being up in between")
	}
}

// TestSeatHealthWithoutALeaseCountsATimeout: a session with no lease
// known (expired, not replaced) is down a timeout after it was first seen
// without a connection.
func TestSeatHealthWithoutALeaseCountsATimeout(t *testing.T) {
	t0, timeout := time.Unix(1000, 0), time.Second
	var h SeatHealth
	if down, at := h.Observe(t0, false, time.Time{}, false, timeout); down || !at.Equal(t0.Add(timeout)) {
		t.Fatalf("first seen cut off: down %v, at %v; want up until %v", down, at, t0.Add(timeout))
	}
	if down, _ := h.Observe(t0.Add(timeout), false, time.Time{}, false, timeout); !down {
		t.Fatalf("not down a timeout after it was first seen cut off")
	}
}

// TestDealUnavailableMovesOnlyWhatItsTargetCannotLead: a shard whose
// target lists it unavailable goes to its current holder if that may take
// it, else to the member with the fewest shards; pinned shards, and

// TestSeat: (looks at a sibling session over time) → changes and plans: a
// session cut off is down after its timeout (a wake asks for the look
// then), its shards not led here are marked unavailable when it goes down
// and again every half timeout, and once it is connected again the marks
// go and the record changes.
func TestSeat(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const timeout = 2 * time.Second
	c := NewCore[int](Config{Me: "me", Started: t0})
	c.Leading.Start("led", 1, t0)
	on := []string{"led", "free"}
	asked := 0
	shardsOn := func() []string { asked++; return on }
	look := func(connected bool) SeatLook { return SeatLook{Connected: connected, Timeout: timeout} }
	steps := []struct {
		at          time.Duration
		connected   bool
		change      SeatChange
		plan        Plan
		unavailable []string
		asked       int
	}{
		{0, true, SeatSame, Plan{}, nil, 0},
		{time.Second, false, SeatSame, Plan{WakeIn: timeout}, nil, 0},
		{time.Second + timeout, false, SeatWentDown, Plan{}, []string{"free"}, 1},
		{time.Second + timeout + timeout/4, false, SeatSame, Plan{}, []string{"free"}, 1},
		{time.Second + timeout + timeout/2, false, SeatSame, Plan{}, []string{"free"}, 2},
		{2 * timeout, true, SeatCameUp, Plan{RecordChanged: true}, nil, 2},
	}
	for i, st := range steps {
		c.Steps.Dirty = false
		change, p := c.Seat(7, look(st.connected), shardsOn, t0.Add(st.at))
		if change != st.change || !reflect.DeepEqual(p, st.plan) {
			t.Fatalf("look %d at %v: %v %+v, want %v %+v", i, st.at, change, p, st.change, st.plan)
		}
		if got := c.Unavail.List(); !slices.Equal(got, st.unavailable) {
			t.Fatalf("look %d: unavailable %v, want %v", i, got, st.unavailable)
		}
		if asked != st.asked {
			t.Fatalf("look %d: the shards on the seat read %d times, want %d (only when a mark is due)", i, asked, st.asked)
		}
		if marked := st.change == SeatWentDown || st.change == SeatCameUp; marked && !c.Steps.Dirty {
			t.Fatalf("look %d: the assignment not marked to compute again", i)
		}
	}
}

// TestPlanAnd: two plans as one: lists appended, flags or'ed, the earlier
// wake.
func TestPlanAnd(t *testing.T) {
	p := Plan{Start: []string{"1"}, WakeIn: time.Second}.And(Plan{Start: []string{"2"}, RecordChanged: true, WakeIn: time.Millisecond})
	want := Plan{Start: []string{"1", "2"}, RecordChanged: true, WakeIn: time.Millisecond}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("%+v, want %+v", p, want)
	}
	if p := (Plan{WakeIn: time.Millisecond}).And(Plan{}); p.WakeIn != time.Millisecond {
		t.Fatalf("no wake in the second plan: wake %v, want the first's", p.WakeIn)
	}
}
