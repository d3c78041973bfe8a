package member

import (
	"slices"
	"testing"
	"time"
)

// TestNewSession: a session replaced within the grace reserves the
// shards assigned here and turns suspended claims into reservations,
// counting the grace from the old session's last lease; the run's first
// session, or one replaced after its grace, reserves nothing.
func TestNewSession(t *testing.T) {
	t0 := time.Unix(1000, 0)
	grace := 10 * time.Second
	tests := []struct {
		name         string
		first        bool
		leaseAgo     time.Duration // the old session's last lease deadline, before t0 (0: none)
		wantReserved []string
		wantLeft     time.Duration
	}{
		{"replaced, no lease noted: the whole grace", false, 0, []string{"1", "2", "9"}, grace},
		{"replaced, lease 4s ago: the grace from it", false, 4 * time.Second, []string{"1", "2", "9"}, grace - 4*time.Second},
		{"replaced after its grace: nothing reserved for the targets", false, grace, []string{}, 0},
		{"the run's first session: nothing for the targets", true, 0, []string{"9"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[int](Config{Me: "me", RestartGrace: grace, Started: t0})
			c.Assign.SetTargets(map[string]string{"1": "me", "2": "me", "3": "b"})
			c.Leading.Start("9", 1, t0)
			c.Grace.Suspend("9", t0)
			if tt.leaseAgo > 0 {
				c.Grace.NoteLease(t0.Add(-tt.leaseAgo))
			}
			n, left, p := c.NewSession(t0, tt.first)
			got := slices.Sorted(c.Grace.Reserved())
			if !slices.Equal(got, tt.wantReserved) && !(len(got) == 0 && len(tt.wantReserved) == 0) {
				t.Errorf("reserved %v, want %v", got, tt.wantReserved)
			}
			if left != tt.wantLeft || p.RecordChanged != (tt.wantLeft > 0) {
				t.Errorf("left %v, record changed %v; want %v, %v", left, p.RecordChanged, tt.wantLeft, tt.wantLeft > 0)
			}
			wantN := 0
			if tt.wantLeft > 0 {
				wantN = 2 // "1" and "2", targeted here
			}
			if n != wantN {
				t.Errorf("reserved %d for the targets, want %d", n, wantN)
			}
			if c.Leading.Leads("9") {
				t.Error("a suspended claim still led after its session was replaced")
			}
		})
	}
}
