package recipe

import (
	"testing"
	"time"
)

// TestLeaseWaitLogWarnsOnceATimeoutThenEveryMinute: a wait for the lease is
// warned about once its oldest election has waited a session timeout, at
// most once every leaseWarnEvery, and its end is told once, only after a
// warning.
func TestLeaseWaitLogWarnsOnceATimeoutThenEveryMinute(t *testing.T) {
	const timeout = 2 * time.Second
	t0 := time.Unix(1000, 0)
	var g leaseWaitLog
	steps := []struct {
		at          time.Duration // since t0
		waiting     int
		oldest      time.Duration // since t0
		warn, ended bool
	}{
		{at: 0, waiting: 0},                      // nobody waits: nothing to say
		{at: time.Second, waiting: 3, oldest: 0}, // waited 1 s < timeout
		{at: 2 * time.Second, waiting: 3, oldest: 0, warn: true},
		{at: 3 * time.Second, waiting: 5, oldest: 0}, // warned a second ago
		{at: 62 * time.Second, waiting: 5, oldest: 0, warn: true},
		{at: 63 * time.Second, waiting: 0, ended: true},
		{at: 64 * time.Second, waiting: 0},                                        // told already
		{at: 65 * time.Second, waiting: 1, oldest: 64 * time.Second},              // a new, short wait
		{at: 65500 * time.Millisecond, waiting: 0},                                // ended unwarned: nothing to say
		{at: 70 * time.Second, waiting: 1, oldest: 67 * time.Second},              // long, but warned 8 s ago
		{at: 122 * time.Second, waiting: 1, oldest: 67 * time.Second, warn: true}, // a minute after the last warning
		{at: 123 * time.Second, waiting: 0, ended: true},
	}
	for i, st := range steps {
		warn, ended := g.observe(t0.Add(st.at), st.waiting, t0.Add(st.oldest), timeout)
		if warn != st.warn || ended != st.ended {
			t.Errorf("step %d (at %v, %d waiting): warn %v ended %v, want %v %v", i, st.at, st.waiting, warn, ended, st.warn, st.ended)
		}
	}
}
