package zkconn

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/jute"
)

func TestSyncAnswerVouchesFromAnEarlierSyncsAnswer(t *testing.T) {
	const timeout = 2 * time.Second
	const id = 0x51
	w := newWireTracker(3, timeout, zerolog.Nop())
	c := &wireConn{w: w, session: id}
	t0 := time.Now()
	i := timeout / 6
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	c.syncsInFlight = 6
	c.syncAnswered(leaseSync(at(0)), -112, at(10*time.Millisecond)) // session expired: vouches for nothing, proves nothing
	c.syncAnswered(leaseSync(at(0)), 0, at(10*time.Millisecond))    // the first answer: nothing earlier
	if _, ok := w.leaseDeadline(id); ok {
		t.Fatal("a sync with no earlier answered one renewed the lease")
	}
	// Sent an interval later, answered after a stall of 900 ms together
	// with the next: the send gap (i > T/8) proves nothing of arrivals.
	c.syncAnswered(leaseSync(at(i)), 0, at(900*time.Millisecond))
	if d, ok := w.leaseDeadline(id); !ok || !d.Equal(at(timeout)) {
		t.Fatalf("lease deadline %v (ok %v), want from the first sync, answered T/8 before the second was sent: %v", d, ok, at(timeout))
	}
	c.syncAnswered(leaseSync(at(2*i)), 0, at(900*time.Millisecond)) // the second's answer came after the third was sent
	if d, _ := w.leaseDeadline(id); !d.Equal(at(timeout)) {
		t.Fatalf("lease deadline %v after the stalled syncs, want still from the first, %v", d, at(timeout))
	}
	c.syncAnswered(leaseSync(at(900*time.Millisecond+timeout/8)), 0, at(time.Second)) // a gap after the stall's answers
	if d, _ := w.leaseDeadline(id); !d.Equal(at(2*i + timeout)) {
		t.Fatalf("lease deadline %v, want from the third sync (answered T/8 before), %v", d, at(2*i+timeout))
	}
	w.vouch(id+1, at(time.Second)) // a new session's connect response
	if _, ok := w.leaseDeadline(id); ok {
		t.Fatal("a new session's handshake renewed the old session's lease")
	}
	if d, ok := w.leaseDeadline(id + 1); !ok || !d.Equal(at(time.Second+timeout)) {
		t.Fatalf("new session's lease %v (ok %v), want %v", d, ok, at(time.Second+timeout))
	}
	if c.syncsInFlight != 1 {
		t.Fatalf("%d syncs in flight, want 1", c.syncsInFlight)
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
