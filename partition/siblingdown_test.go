package partition_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// connectSiblingsVia opens a session to the shared server directly whose
// siblings (recipe.Session.Sibling, opened after this returns) connect
// through proxy instead: the dialer is shared, and switched once the
// session is up.
func connectSiblingsVia(t *testing.T, dial func(network, address string, timeout time.Duration) (net.Conn, error)) *recipe.Session {
	t.Helper()
	var via atomic.Bool
	dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
		if via.Load() {
			return dial(network, address, timeout)
		}
		return net.DialTimeout(network, address, timeout)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(sessionTimeout),
		recipe.WithLogger(zerolog.Nop()), recipe.WithDialer(dialer))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	via.Store(true)
	return sess
}

// TestSiblingSessionDownDealsItsShardsElsewhere: member a runs 10 of 20
// shards with MaxShardsPerSession 8, so 3 of its elections sit on a
// sibling session; that sibling is blackholed for 20 s while a's primary
// session stays connected. The sibling's shards are led by b long before
// the heal (a publishes them as unavailable once the sibling has not been
// connected for about a session timeout), after the heal the balance deals
// them as before, and the guard accepts no stale write. They used to stay
// unled for the whole cut: a stayed live through its primary, and the
// balance dealt them back to a, whose runners sat on the dead sibling.
func TestSiblingSessionDownDealsItsShardsElsewhere(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	tr.checkZnodes(t)
	capEight := func(c *partition.Config) { c.MaxShardsPerSession = 8 }
	proxy := zkc.NewProxyT(t)
	b := startMember(t, root, "b", shards, tr, capEight)
	a := startMemberOn(t, connectSiblingsVia(t, proxy.Dialer()), root, "a", shards, tr, capEight)
	ms := []*member{a, b}
	waitBalanced(t, shards, ms, 20*time.Second)
	if partition.SessionOf(a.m, 1) == nil {
		t.Fatalf("a leads %d shards with MaxShardsPerSession 8 on one session", len(a.m.Leaderships()))
	}
	aLed := len(a.m.Leaderships())
	cut := time.Now()
	proxy.Blackhole()
	waitFor(t, 20*time.Second, "a to lose the leaderships on its sibling", func() (bool, string) {
		n := len(a.m.Leaderships())
		return n < aLed, fmt.Sprintf("a leads %d, led %d", n, aLed)
	})
	waitFor(t, 10*time.Second, "every shard led while a's sibling is cut off", func() (bool, string) {
		lead := leaders(t, ms)
		return len(lead) == len(shards), fmt.Sprintf("%d/%d led, a %d", len(lead), len(shards), len(a.m.Leaderships()))
	})
	ledAt := time.Since(cut)
	t.Logf("all %d shards led %v after the cut (session timeout %v); a leads %d, b %d",
		len(shards), ledAt.Round(10*time.Millisecond), sessionTimeout, len(a.m.Leaderships()), len(b.m.Leaderships()))
	time.Sleep(time.Until(cut.Add(20 * time.Second))) // the length of the cut under test, not synchronisation
	lead := leaders(t, ms)
	if len(lead) != len(shards) {
		t.Errorf("%d/%d shards led at the end of the cut", len(lead), len(shards))
	}
	proxy.Heal()
	_, d := waitBalanced(t, shards, ms, 30*time.Second)
	t.Logf("balanced %v after the heal", d.Round(10*time.Millisecond))
	tr.check(t, false)
}

// TestSiblingSessionRefusedDealsItsShardsElsewhere: member a runs 10 of 20
// shards with MaxShardsPerSession 8, but every connection of a sibling
// session is refused (as a server over its per-client connection limit
// refuses it), so 3 of its elections find no session. a publishes them as
// unavailable and b leads them; the guard accepts no stale write. They
// used to stay unled for as long as a ran, with b live and idle.
func TestSiblingSessionRefusedDealsItsShardsElsewhere(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 20)
	tr.checkZnodes(t)
	capEight := func(c *partition.Config) { c.MaxShardsPerSession = 8 }
	refuse := func(string, string, time.Duration) (net.Conn, error) {
		return nil, errors.New("test: connection refused")
	}
	b := startMember(t, root, "b", shards, tr, capEight)
	a := startMemberOn(t, connectSiblingsVia(t, refuse), root, "a", shards, tr, capEight)
	ms := []*member{a, b}
	waitFor(t, 40*time.Second, "every shard led, a's siblings refused", func() (bool, string) {
		lead := leaders(t, ms)
		return len(lead) == len(shards), fmt.Sprintf("%d/%d led, a %d, b %d", len(lead), len(shards), len(a.m.Leaderships()), len(b.m.Leaderships()))
	})
	t.Logf("a leads %d, b %d", len(a.m.Leaderships()), len(b.m.Leaderships()))
	if partition.SessionOf(a.m, 1) != nil {
		t.Errorf("a opened a sibling session through a dialer that refuses every connection")
	}
	tr.check(t, false)
}
