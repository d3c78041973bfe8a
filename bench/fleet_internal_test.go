package bench

import "testing"

// TestFleetBalanceCounts checks the fleet's per-member counts, which the
// convergence check reads instead of scanning every shard: a shard started
// by a member before its previous leader told its stop counts once, for
// the new leader; a crashed or excluded member's shards are not balanced.
func TestFleetBalanceCounts(t *testing.T) {
	f := (&env{shardIDs: "s-%d"}).newFleet("/r", 4)
	f.members["a"], f.members["b"] = &fleetMember{id: "a"}, &fleetMember{id: "b"}
	for _, s := range f.shards {
		f.started("a", s)
	}
	if f.converged() {
		t.Fatal("a leads 4 of 4 shards over 2 members: converged")
	}
	f.setDrained("b", true)
	if !f.converged() {
		t.Fatalf("a leads every shard and b, drained, none: not converged (%s)", f.loads())
	}
	f.setDrained("b", false)
	f.started("b", "s-0") // before a told its stop
	f.started("b", "s-1")
	if !f.converged() || f.loads() != "a 2, b 2" {
		t.Fatalf("2 and 2: converged %v, loads %q", f.converged(), f.loads())
	}
	f.stopped("a", "s-0") // a's late stop of a shard b leads changes nothing
	if !f.converged() {
		t.Fatalf("a's late stop undid b's lead: %s", f.loads())
	}
	f.members["b"].crashed = true
	if f.converged() {
		t.Fatal("b crashed and still counts")
	}
	f.stopped("b", "s-1")
	if f.converged() || f.ledCount() != 3 {
		t.Fatalf("s-1 has no leader: converged %v, %d led", f.converged(), f.ledCount())
	}
}
