package member

import (
	"slices"
	"testing"
	"time"
)

// TestGraceEachReservationHasItsOwnDeadline: a shard lost later does not
// extend the reservation of one lost earlier (a flapping sibling session
// used to keep every earlier loss reserved for as long as it flapped).
func TestGraceEachReservationHasItsOwnDeadline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := NewGrace(time.Second)
	g.ReserveFor("a", t0)
	g.ReserveFor("b", t0.Add(600*time.Millisecond))
	if g.Expire(t0.Add(999 * time.Millisecond)) {
		t.Fatalf("a reservation ended before its grace")
	}
	if !g.Expire(t0.Add(time.Second)) || g.IsReserved("a") || !g.IsReserved("b") {
		t.Fatalf("after a's grace: a reserved %v, b reserved %v; want only b", g.IsReserved("a"), g.IsReserved("b"))
	}
	if !g.Expire(t0.Add(1600*time.Millisecond)) || len(g.reserved) != 0 {
		t.Fatalf("after b's grace: %v still reserved", g.reserved)
	}
}

// TestGraceReserveKeepsTheLaterDeadline: reserving a reserved shard again
// never shortens its reservation; a deadline not after now, or a negative
// RestartGrace, reserves nothing.
func TestGraceReserveKeepsTheLaterDeadline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := NewGrace(time.Second)
	g.Reserve("a", t0, t0.Add(2*time.Second))
	g.Reserve("a", t0, t0.Add(time.Second))
	if got := g.reserved["a"]; !got.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("a reserved until %v, want %v", got, t0.Add(2*time.Second))
	}
	if g.Reserve("b", t0, t0) {
		t.Errorf("a reservation ending now was made")
	}
	off := NewGrace(-1)
	if off.ReserveFor("c", t0) || len(off.reserved) != 0 {
		t.Errorf("RestartGrace < 0 reserved %v", off.reserved)
	}
}

// TestGraceAfterLossCountsFromTheLease: the grace after a session's loss
// ends RestartGrace after the last lease deadline noted (the others cannot
// have seen the session expire before it), not after the moment the loss
// was found; a member that finds it after that reserves nothing.
func TestGraceAfterLossCountsFromTheLease(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := NewGrace(time.Second)
	lease := t0.Add(700 * time.Millisecond)
	g.NoteLease(t0.Add(300 * time.Millisecond))
	g.NoteLease(lease)
	g.NoteLease(t0) // an older sample never moves the lease back
	if got := g.AfterLoss(lease.Add(2 * time.Second)); !got.Equal(lease.Add(time.Second)) {
		t.Errorf("grace after a loss found 2s after the lease ends at %v, want %v", got, lease.Add(time.Second))
	}
	if !g.lease.IsZero() {
		t.Errorf("afterLoss kept the lost session's lease %v", g.lease)
	}
	found := lease.Add(2 * time.Second)
	g.NoteLease(lease)
	if g.Reserve("a", found, g.AfterLoss(found)) {
		t.Errorf("a loss found past the lease and the grace reserved a shard")
	}
	if got := g.AfterLoss(t0); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("without a lease, grace ends at %v, want %v", got, t0.Add(time.Second))
	}
	g.NoteLease(lease)
	if got := g.AfterLoss(t0); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("loss found before the lease ran out: grace ends at %v, want a full grace %v", got, t0.Add(time.Second))
	}
}

// TestGraceSuspendedClaims: a suspension older than the session timeout
// becomes a reservation for the grace from then; a fresh one stays; a lost
// session turns every suspension into a reservation until its grace ends.
func TestGraceSuspendedClaims(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := NewGrace(time.Second)
	g.Suspend("old", t0)
	g.Suspend("new", t0.Add(900*time.Millisecond))
	now := t0.Add(1100 * time.Millisecond)
	if got := g.DropSuspended(now, time.Second); !slices.Equal(got, []string{"old"}) {
		t.Fatalf("dropSuspended = %v, want [old]", got)
	}
	if got := g.reserved["old"]; !got.Equal(now.Add(time.Second)) {
		t.Errorf("old reserved until %v, want %v", got, now.Add(time.Second))
	}
	if _, ok := g.suspended["new"]; !ok {
		t.Errorf("a suspension younger than the timeout ended")
	}
	g.Resume("new")
	g.Suspend("x", now)
	until := now.Add(300 * time.Millisecond)
	if got := g.SuspendedLost(now, until); !slices.Equal(got, []string{"x"}) || len(g.suspended) != 0 {
		t.Fatalf("suspendedLost = %v, left %v; want [x], none", got, g.suspended)
	}
	if got := g.reserved["x"]; !got.Equal(until) {
		t.Errorf("x reserved until %v, want %v", got, until)
	}
}
