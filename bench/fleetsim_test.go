package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRunFleetSim runs the fleet simulation on a small fleet (4 members
// of 500 shards, three simulated) and checks each row: the real member
// leads its share after it joins, reads bytes for each record change (at
// least the record's stored size, not far more), keeps leading its share
// through the rolling restart, and leads a larger share after a
// simulated member crashes.
func TestRunFleetSim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := small(t, ScenarioFleetSim)
	cfg.FleetShards, cfg.FleetShare, cfg.TickTime, cfg.SessionTimeout = []int{2000}, 500, 200*time.Millisecond, 4*time.Second
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
	rows := map[string]Result{}
	for _, r := range rep.Results {
		name, _, _ := strings.Cut(r.Scenario, " (")
		rows[name] = r
	}
	for _, name := range []string{"fleetsim/joins: leads its share", "fleetsim/live heap", "fleetsim/CPU a change",
		"fleetsim/rolling restart: CPU a restart", "fleetsim/a member crashes: leads its new share"} {
		if r, ok := rows[name]; !ok || r.Value <= 0 && name != "fleetsim/CPU a change" {
			t.Errorf("row %q: %+v (present %v), want a positive value", name, r, ok)
		}
	}
	if r := rows["fleetsim/bytes read a change"]; r.Value < 1000 {
		t.Errorf("bytes read a change %v: each change is a record of 500 leaderships, read whole", r.Value)
	}
	if r := rows["fleetsim/rolling restart: CPU a restart"]; !strings.Contains(r.Note, "led at least 500 of its 500") {
		t.Errorf("rolling restart: %q, want the member to keep leading its 500 shards throughout", r.Note)
	}
	if r := rows["fleetsim/a member crashes: leads its new share"]; !strings.Contains(r.Note, "to the real member") {
		t.Errorf("crash: %q", r.Note)
	}
}
