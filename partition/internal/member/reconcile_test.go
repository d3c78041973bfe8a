package member

import (
	"reflect"
	"testing"
	"time"
)

// TestReconcile: (state, concerns, now) → plan: a runner for a shard
// assigned here without one; a withdrawal of a runner not leading a shard
// assigned elsewhere; a leadership assigned elsewhere handed off only
// once settled (at once when drained); busy runners and skipped shards
// left alone, but a skipped shard's runner stopped unless it is stopping.
func TestReconcile(t *testing.T) {
	t0 := time.Unix(1000, 0)
	settle := time.Second
	tests := []struct {
		name       string
		leads      []string
		settling   map[string]time.Duration // shard → settling since, before t0
		concerns   []Concern
		drained    bool
		want       Plan
		wantQueued int
		wantActed  bool
	}{
		{
			name:     "assigned here without a runner: started",
			concerns: []Concern{{Shard: "1", Target: "me"}, {Shard: "2", Target: "me", Runner: true}},
			want:     Plan{Start: []string{"1"}}, wantActed: true,
		},
		{
			name:     "assigned elsewhere, not led: withdrawn",
			concerns: []Concern{{Shard: "1", Target: "b", Runner: true}},
			want:     Plan{Withdraw: []string{"1"}}, wantActed: true,
		},
		{
			name:     "led, assigned elsewhere: settles first, woken when settled",
			leads:    []string{"1"},
			concerns: []Concern{{Shard: "1", Target: "b", Runner: true}},
			want:     Plan{WakeIn: settle}, wantActed: true,
		},
		{
			name:     "led, assigned elsewhere for the settle delay: queued",
			leads:    []string{"1"},
			settling: map[string]time.Duration{"1": settle},
			concerns: []Concern{{Shard: "1", Target: "b", Runner: true}},
			want:     Plan{}, wantQueued: 1, wantActed: true,
		},
		{
			name:     "drained: queued at once",
			leads:    []string{"1"},
			concerns: []Concern{{Shard: "1", Target: "b", Runner: true}},
			drained:  true,
			want:     Plan{}, wantQueued: 1, wantActed: true,
		},
		{
			name:     "busy runner and skipped shard: left alone",
			leads:    []string{"1"},
			concerns: []Concern{{Shard: "1", Target: "b", Runner: true, Busy: true}, {Shard: "2", Target: "me", Skip: true}},
			want:     Plan{},
		},
		{
			name: "removed or moving to buckets, its runner not stopping: stopped",
			concerns: []Concern{
				{Shard: "1", Target: "me", Runner: true, Skip: true},
				{Shard: "2", Target: "b", Runner: true, Skip: true, Stopping: true, Busy: true},
				{Shard: "3", Skip: true, Runner: true},
			},
			want: Plan{Stop: []string{"1", "3"}}, wantActed: true,
		},
		{
			name:     "assigned here again while settling: the settle ends",
			leads:    []string{"1"},
			settling: map[string]time.Duration{"1": settle / 2},
			concerns: []Concern{{Shard: "1", Target: "me", Runner: true}},
			want:     Plan{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[int](Config{Me: "me", Started: t0})
			c.Assign.Begin()
			for _, s := range tt.leads {
				c.Leading.Start(s, 1, t0)
			}
			for s, ago := range tt.settling {
				c.Handoffs.Settled(s, t0.Add(-ago), settle, false)
			}
			c.Steps.Stale = true
			got := c.Reconcile(tt.concerns, t0, settle, tt.drained)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan %+v, want %+v", got, tt.want)
			}
			if c.Handoffs.Queued() != tt.wantQueued {
				t.Errorf("queued %d, want %d", c.Handoffs.Queued(), tt.wantQueued)
			}
			if c.Steps.Acted != tt.wantActed || c.Steps.Stale {
				t.Errorf("acted %v stale %v, want acted %v, not stale", c.Steps.Acted, c.Steps.Stale, tt.wantActed)
			}
			if tt.name == "assigned here again while settling: the settle ends" && c.Handoffs.Settling() {
				t.Error("still settling once assigned here again")
			}
		})
	}
}
