package member

import (
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
