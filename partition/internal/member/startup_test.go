package member

import (
	"testing"
	"time"
)

// TestStartupWait: the first elections wait until the live members have
// not changed for the settle time, at most StartupSettleCap settle times
// from the start; the expected members all live, or a negative settle,
// end the wait at once; once over it stays over.
func TestStartupWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const settle = 300 * time.Millisecond
	tests := []struct {
		name         string
		changes      []time.Duration // live members changed at t0 plus each
		settle       time.Duration
		expectedLive bool
		at           time.Duration
		wantOK       bool
		wantWait     time.Duration
	}{
		{"no change yet", nil, settle, false, 100 * time.Millisecond, false, 200 * time.Millisecond},
		{"quiet for the settle time", nil, settle, false, settle, true, 0},
		{"a change restarts the wait", []time.Duration{200 * time.Millisecond}, settle, false, 400 * time.Millisecond, false, 100 * time.Millisecond},
		{"changes never end: the cap", []time.Duration{1100 * time.Millisecond}, settle, false, 1150 * time.Millisecond, false, 50 * time.Millisecond},
		{"the cap reached", []time.Duration{1100 * time.Millisecond}, settle, false, 1200 * time.Millisecond, true, 0},
		{"expected members live", nil, settle, true, 0, true, 0},
		{"no wait configured", nil, -1, false, 0, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStartup(t0)
			s.MembersChanged(t0)
			for _, c := range tt.changes {
				if s.MembersChanged(t0.Add(c)) {
					t.Fatalf("MembersChanged reported the wait over before it ended")
				}
			}
			ok, wait := s.Settled(t0.Add(tt.at), tt.settle, tt.expectedLive)
			if ok != tt.wantOK || wait != tt.wantWait {
				t.Fatalf("Settled = %v, %v; want %v, %v", ok, wait, tt.wantOK, tt.wantWait)
			}
			if ok != s.Done() {
				t.Fatalf("Done() = %v after Settled = %v", s.Done(), ok)
			}
			if ok && !s.MembersChanged(t0.Add(time.Hour)) {
				t.Fatalf("a change after the wait is not reported as after it (urgent)")
			}
			if ok {
				if again, _ := s.Settled(t0.Add(tt.at), settle, false); !again {
					t.Fatalf("the wait began again after it was over")
				}
			}
		})
	}
}
