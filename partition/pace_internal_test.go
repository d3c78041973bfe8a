package partition

import (
	"testing"
	"time"
)

// TestPaceActsOnAnOperatorChangeAtOnce: a step put off by the step gap
// (seconds at 100,000 shards) runs minStep after the last one when an
// operator's change came (urgent), and the next one is paced again.
func TestPaceActsOnAnOperatorChangeAtOnce(t *testing.T) {
	tests := []struct {
		name   string
		urgent bool
		since  time.Duration // since the last step
		want   bool
	}{
		{"record change within the gap", false, 10 * minStep, false},
		{"operator change within the gap", true, 10 * minStep, true},
		{"operator change within minStep", true, 0, false},
		{"record change after the gap", false, time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &loop{stepState: stepState{wake: stoppedTimer(), dirty: true, urgent: tt.urgent,
				stepGap: maxStepGap, lastStep: time.Now().Add(-tt.since)}}
			defer l.wake.Stop()
			if got := l.pace(); got != tt.want {
				t.Fatalf("pace() = %v, want %v", got, tt.want)
			}
			if tt.want && l.urgent {
				t.Fatalf("urgent still set after the step it asked for")
			}
			if !tt.want && l.wakeAt.IsZero() {
				t.Fatalf("a step put off set no wake-up")
			}
		})
	}
}
