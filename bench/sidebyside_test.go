package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestRunPeersTableAndJSON runs a tiny peers scenario (zkelect, kazoo and
// Curator candidates as processes) and checks the report's shape, never
// its timings: every library in column order, measured (make deps installs
// kazoo and Curator), each step with its floor and ratios, in the table and
// in the JSON.
func TestRunPeersTableAndJSON(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := small(t, ScenarioPeers)
	cfg.PeerTrials, cfg.PeerKillTrials = 2, 1
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sb := rep.SideBySide
	if sb == nil {
		t.Fatal("no side-by-side table in the report")
	}
	var names []string
	for _, p := range sb.Peers {
		names = append(names, p.Name)
		if p.Missing != "" {
			t.Errorf("%s missing: %s", p.Name, p.Missing)
		}
	}
	if strings.Join(names, ",") != "zkelect,kazoo,curator" {
		t.Fatalf("peers %v, want zkelect, kazoo, curator", names)
	}
	want := map[string]int{StepResign: 2, StepExit: 2, StepKill: 1}
	if len(sb.Rows) != 3 {
		t.Fatalf("%d rows, want resign, exit, kill", len(sb.Rows))
	}
	for _, r := range sb.Rows {
		if r.Floor.Dist.N == 0 || r.Floor.Name == "" {
			t.Errorf("%s: no floor: %+v", r.Step, r.Floor)
		}
		for _, c := range r.Cells {
			if c.Dist == nil || c.Dist.N != want[r.Step] || c.P50ToFloor <= 0 || len(c.P50ToPeer) != 2 {
				t.Errorf("%s/%s: cell %+v, want %d failovers with ratios to the floor and 2 peers", r.Step, c.Peer, c, want[r.Step])
			}
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", buf.String())
	for _, s := range []string{"side by side", "zkelect", "kazoo 2", "curator 5", "session-expiry detection", "×floor", "×kazoo p50", "create floor"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q", s)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		SideBySide struct {
			Peers []map[string]any `json:"peers"`
			Rows  []struct {
				Step  string           `json:"step"`
				Cells []map[string]any `json:"cells"`
			} `json:"rows"`
		} `json:"side_by_side"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.SideBySide.Peers) != 3 || len(back.SideBySide.Rows) != 3 || back.SideBySide.Rows[2].Step != StepKill ||
		back.SideBySide.Rows[0].Cells[0]["p50_to_peer"] == nil {
		t.Errorf("JSON side_by_side: %s", b)
	}
}

// TestMissingPeerIsReported: a library that could not run keeps its column,
// marked missing with the reason, and the others' ratios skip it.
func TestMissingPeerIsReported(t *testing.T) {
	d := Dist{N: 1, P50: 2 * time.Millisecond, P99: 4 * time.Millisecond, Max: 4 * time.Millisecond}
	ps := []PeerInfo{{Name: PeerZkelect}, {Name: PeerKazoo, Missing: "no python3 imports kazoo"}, {Name: PeerCurator}}
	floor := FloorDist{Name: "delete→watch notification", Dist: Dist{N: 1, P50: time.Millisecond, P99: 2 * time.Millisecond}}
	row := newStepRow(StepResign, floor, ps, map[string]*Dist{PeerZkelect: &d, PeerCurator: &d})
	if c := row.Cells[1]; c.Dist != nil || c.Missing != "no python3 imports kazoo" {
		t.Fatalf("kazoo cell %+v, want missing with the reason", c)
	}
	if c := row.Cells[0]; c.P50ToFloor != 2 || c.P99ToFloor != 2 || len(c.P50ToPeer) != 1 || c.P50ToPeer[PeerCurator] != 1 {
		t.Fatalf("zkelect cell %+v, want 2x the floor and 1x curator only", c)
	}
	var buf bytes.Buffer
	sb := &SideBySide{Peers: ps, Rows: []StepRow{row}}
	if err := sb.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "missing") || !strings.Contains(buf.String(), "kazoo missing: no python3 imports kazoo") {
		t.Fatalf("table does not report kazoo missing:\n%s", buf.String())
	}
}
