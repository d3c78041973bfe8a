package zkconn

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/jute"
)

func TestSyncAnswerVouchesFromAnEarlierSync(t *testing.T) {
	const timeout = 2 * time.Second
	w := newWireTracker(3, timeout, zerolog.Nop())
	c := &wireConn{w: w}
	t0 := time.Now()
	c.syncs = []time.Time{t0, t0.Add(timeout / 6), t0.Add(timeout / 3)}
	early := t0.Add(timeout / 6).Add(timeout / 16) // under an eighth after the second

	c.syncsInFlight = 4
	c.syncAnswered(leaseSync(t0.Add(timeout/3)), -112) // session expired: vouches for nothing
	if _, ok := w.leaseDeadline(); ok {
		t.Fatal("a failed sync renewed the lease")
	}
	c.syncAnswered(leaseSync(t0.Add(timeout/16)), 0) // no sync an eighth of the timeout before it
	if _, ok := w.leaseDeadline(); ok {
		t.Fatal("a sync with no earlier one an eighth of the timeout before it renewed the lease")
	}
	c.syncAnswered(leaseSync(early), 0) // vouches from the first, not the second
	if d, ok := w.leaseDeadline(); !ok || !d.Equal(t0.Add(timeout)) {
		t.Fatalf("lease deadline %v (ok %v), want the first sync's send time + timeout, %v", d, ok, t0.Add(timeout))
	}
	c.syncAnswered(leaseSync(t0.Add(timeout/3)), 0) // vouches from the second
	if d, ok := w.leaseDeadline(); !ok || !d.Equal(t0.Add(timeout/6+timeout)) {
		t.Fatalf("lease deadline %v (ok %v), want the second sync's send time + timeout, %v", d, ok, t0.Add(timeout/6+timeout))
	}
	if len(c.syncs) != 2 || c.syncsInFlight != 0 {
		t.Fatalf("kept %d syncs, %d in flight; want the vouching one and later (2), 0", len(c.syncs), c.syncsInFlight)
	}
}

// leaseSync is a lease sync sent at t.
func leaseSync(t time.Time) sentRequest { return sentRequest{at: t, op: jute.OpSync, lease: true} }

func TestHandshakeBoundGrowsAfterTimeoutsAndShrinksBack(t *testing.T) {
	const timeout = 2 * time.Second
	w := newWireTracker(3, timeout, zerolog.Nop())
	base := w.handshakeBound()
	if base != timeout/9 {
		t.Fatalf("first bound %v, want a third of the timeout shared by 3 servers, %v", base, timeout/9)
	}
	w.handshakeTimedOut(base)
	if got := w.handshakeBound(); got != 2*base {
		t.Fatalf("bound after a timeout %v, want %v", got, 2*base)
	}
	for range 10 {
		w.handshakeTimedOut(w.handshakeBound())
	}
	if got := w.handshakeBound(); got != timeout*2/3 {
		t.Fatalf("bound after many timeouts %v, want the cap, two thirds of the timeout (%v)", got, timeout*2/3)
	}
	w.handshakeTook(600 * time.Millisecond)
	if got := w.handshakeBound(); got != 900*time.Millisecond {
		t.Fatalf("bound after a 600ms handshake %v, want 900ms", got)
	}
	w.handshakeTook(5 * time.Millisecond)
	if got := w.handshakeBound(); got != base {
		t.Fatalf("bound after a prompt handshake %v, want the first one, %v", got, base)
	}
}
