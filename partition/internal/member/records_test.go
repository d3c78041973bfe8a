package member

import (
	"reflect"
	"testing"
	"time"
)

// TestCollect: (state, records, now) → plan: a record of a member absent
// for longer than the grace is deleted at the version read, once a
// version; one absent for less, or whose member is live, is kept; nothing
// is collected while this member is not live; a member first seen absent
// orphans its shards (a takeover here is a failover to time).
func TestCollect(t *testing.T) {
	t0 := time.Unix(1000, 0)
	grace := 10 * time.Second
	f := func(at time.Duration) Facts { return Facts{Now: t0.Add(at), SessionTimeout: time.Second} }
	gone := Record{ID: "gone", Version: 3, Leading: map[string]uint64{"7": 1}}
	live := Record{ID: "live", Version: 1, Live: true}
	tests := []struct {
		name     string
		selfLive bool
		at       []time.Duration // collect ticks
		records  []Record
		want     []RecordVersion // planned at the last tick
	}{
		{"absent for less than the grace: kept", true, []time.Duration{0, grace - 1}, []Record{gone, live}, nil},
		{"absent for the grace: deleted at its version", true, []time.Duration{0, grace}, []Record{live, gone}, []RecordVersion{{"gone", 3}}},
		{"planned once a version", true, []time.Duration{0, grace, grace + 1}, []Record{gone}, nil},
		{"not live here: nothing collected", false, []time.Duration{0, 2 * grace}, []Record{gone}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCore[int](Config{Me: "me", RestartGrace: grace, Started: t0})
			var p Plan
			for _, at := range tt.at {
				p = c.Collect(f(at), tt.selfLive, tt.records)
			}
			if !reflect.DeepEqual(p.DeleteRecords, tt.want) {
				t.Errorf("deletes %v, want %v", p.DeleteRecords, tt.want)
			}
		})
	}
	t.Run("a new version is collected again, a member back forgets its absence", func(t *testing.T) {
		c := NewCore[int](Config{Me: "me", RestartGrace: grace, Started: t0})
		c.Collect(f(0), true, []Record{gone})
		c.Collect(f(grace), true, []Record{gone})
		again := gone
		again.Version = 4
		if p := c.Collect(f(grace+1), true, []Record{again}); !reflect.DeepEqual(p.DeleteRecords, []RecordVersion{{"gone", 4}}) {
			t.Errorf("a rewritten record: deletes %v, want it at version 4", p.DeleteRecords)
		}
		back := gone
		back.Live = true
		c.Collect(f(grace+2), true, []Record{back})
		if p := c.Collect(f(grace+3), true, []Record{gone}); p.DeleteRecords != nil {
			t.Errorf("absent again after coming back: deletes %v at once, want the grace counted afresh", p.DeleteRecords)
		}
	})
	t.Run("a member first seen absent orphans its shards", func(t *testing.T) {
		c := NewCore[int](Config{Me: "me", RestartGrace: grace, Started: t0})
		c.Collect(f(0), true, []Record{gone})
		eff := c.Report(Event{Shard: "7", Kind: RunnerStarted, Token: 2}, f(time.Second))
		if eff.Failover != time.Second {
			t.Errorf("failover %v, want 1s from the member seen gone", eff.Failover)
		}
	})
	t.Run("a suspended claim older than a session timeout becomes a reservation", func(t *testing.T) {
		c := NewCore[int](Config{Me: "me", RestartGrace: grace, Started: t0})
		c.Leading.Start("5", 1, t0)
		c.Grace.Suspend("5", t0)
		c.Collect(f(2*time.Second), true, nil)
		if c.Leading.Leads("5") || !c.Grace.IsReserved("5") {
			t.Errorf("leads %v, reserved %v; want the claim ended and the shard reserved", c.Leading.Leads("5"), c.Grace.IsReserved("5"))
		}
	})
}
