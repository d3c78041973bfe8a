package member

import (
	"testing"
	"time"
)

// TestEveryLeadershipChangeMarksTheRecord: a leadership started, one
// ended, and a suspended claim withdrawn by a handoff (its runner finished
// without reporting a stop: the drain seen on a reconnect while the quorum
// leader was down, after which the record kept claiming 16 shards) each
// mark the record, from the first change on; ending a shard not claimed
// changes nothing.
func TestEveryLeadershipChangeMarksTheRecord(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name      string
		claimed   []string // Start before, then TakeChange (a record showing them queued)
		do        func(l *Leaderships, now time.Time)
		wantMark  bool
		wantClaim int
	}{
		{"a leadership started", nil, func(l *Leaderships, now time.Time) { l.Start("a", 9, now) }, true, 1},
		{"a leadership ended", []string{"a"}, func(l *Leaderships, now time.Time) { l.End("a", now) }, true, 0},
		{"a suspended claim withdrawn", []string{"a", "b"}, func(l *Leaderships, now time.Time) { l.End("b", now) }, true, 1},
		{"a shard not claimed ends", []string{"a"}, func(l *Leaderships, now time.Time) { l.End("x", now) }, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLeaderships()
			for _, s := range tt.claimed {
				l.Start(s, 7, t0)
			}
			l.TakeChange()
			tt.do(&l, t0.Add(time.Second))
			changed, since := l.Changed()
			if changed != tt.wantMark {
				t.Fatalf("record marked %v, want %v", changed, tt.wantMark)
			}
			if changed && !since.Equal(t0.Add(time.Second)) {
				t.Fatalf("change noted at %v, want the change's time", since)
			}
			if l.Len() != tt.wantClaim {
				t.Fatalf("%d shards claimed, want %d", l.Len(), tt.wantClaim)
			}
		})
	}
	l := NewLeaderships()
	l.Start("a", 1, t0)
	l.Start("b", 2, t0.Add(time.Second))
	if _, since := l.Changed(); !since.Equal(t0) {
		t.Fatalf("publish lag counted from %v, want the first unpublished change (%v)", since, t0)
	}
}
