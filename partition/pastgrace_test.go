package partition_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
)

// TestCutOffPastTheGraceReservesNothing: a member cut off for longer than
// its session timeout plus its restart grace comes back, on a new session,
// after the others deleted its record and took its shards over. Like a
// member restarted after its grace, it reserves nothing; while the fleet
// is frozen it therefore takes nothing back. It used to reserve every
// shard it had been assigned for a new grace from its reconnection, so the
// others handed them back to it in the middle of the freeze.
func TestCutOffPastTheGraceReservesNothing(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 30)
	regs := map[string]*prometheus.Registry{}
	tune := func(id string) func(*partition.Config) {
		regs[id] = prometheus.NewRegistry()
		return func(c *partition.Config) { c.RestartGrace, c.Metrics = 2*time.Second, regs[id] }
	}
	proxy := zkc.NewProxyT(t)
	a := startMember(t, root, "a", shards, tr, tune("a"))
	b := startMember(t, root, "b", shards, tr, tune("b"))
	c := startMemberOn(t, connectTo(t, proxy.Addrs(), sessionTimeout), root, "c", shards, tr, tune("c"))
	waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	if _, err := newOperator(t, root).Freeze(t.Context(), "maintenance window", 0); err != nil {
		t.Fatalf("Freeze: %v", err)
	}
	waitFor(t, 10*time.Second, "every member to see the freeze (zkelect_partition_frozen)", func() (bool, string) {
		fa, fb, fc := gauge(t, regs["a"], "zkelect_partition_frozen"), gauge(t, regs["b"], "zkelect_partition_frozen"), gauge(t, regs["c"], "zkelect_partition_frozen")
		return fa == 1 && fb == 1 && fc == 1, fmt.Sprintf("a %v, b %v, c %v", fa, fb, fc)
	})
	proxy.Blackhole()
	waitFor(t, 20*time.Second, "a and b to lead c's shards once its grace is over", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		return len(lead) == len(shards), fmt.Sprintf("%d/%d led by a and b", len(lead), len(shards))
	})
	// c's own view of its grace, from its cut-off, ends about when the
	// others' did: wait out a grace more before it reconnects.
	time.Sleep(3 * time.Second) // the length of the cut-off under test, not synchronisation
	held := leaders(t, []*member{a, b})
	proxy.Heal()
	waitFor(t, 20*time.Second, "c to register again on a new session", func() (bool, string) {
		live, err := partition.LiveMembers(t.Context(), a.sess, root)
		return err == nil && len(live) == 3, fmt.Sprint(live, err)
	})
	time.Sleep(2 * time.Second) // a window for a handoff to show, not synchronisation
	if n := len(c.m.Leaderships()); n != 0 {
		t.Errorf("c leads %d shards after its return past the grace, during a freeze; want 0", n)
	}
	if n := moved(held, leaders(t, []*member{a, b, c})); n != 0 {
		t.Errorf("%d shards moved during the freeze after c's return, want 0", n)
	}
	tr.check(t, false)
}
