package partition_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// cutOff blackholes and cuts the link of sess (a session through p) and
// expires its session once it saw the disconnection: a process cut off
// from ZooKeeper past its session timeout, its session replaced once the
// link heals.
func cutOff(t *testing.T, p *testenv.Proxy, sess *recipe.Session) {
	t.Helper()
	p.Blackhole()
	p.Cut()
	waitFor(t, 30*time.Second, "the session disconnected", func() (bool, string) { return !sess.Connected(), "" })
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), sess.Conn()); err != nil {
		t.Fatalf("expire the session: %v", err)
	}
}

// cutOffTimeout is the session timeout of the sessions these tests cut off.
const cutOffTimeout = 2 * time.Second

// operatorBehind returns an operator of root on a session of its own
// through a proxy of the test server (cutOffTimeout sessions), to cut off.
func operatorBehind(t *testing.T, root string) (*testenv.Proxy, *recipe.Session, *operator.Operator) {
	t.Helper()
	proxy := zkc.NewProxyT(t)
	sess := connectTo(t, proxy.Addrs(), cutOffTimeout)
	op, err := operator.New(sess, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return proxy, sess, op
}

// stillWaiting fails the test if done delivers (what ended while cut
// off) before three session timeouts passed (past the reads' own
// retries, twice the session timeout), then heals p.
func stillWaiting(t *testing.T, p *testenv.Proxy, timeout time.Duration, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s ended while cut off: %v", what, err)
	case <-time.After(3 * timeout):
	}
	p.Heal()
}

// returnsOnceHealed fails the test unless done delivers nil within 30 s.
func returnsOnceHealed(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s once healed: %v", what, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s still waiting 30s after the link healed", what)
	}
}

// TestWaitMigratedOutlastsACutOff: `zkelect shards migrate --wait`
// (Operator.WaitMigrated) is started while its session is cut off past
// the session timeout. It once failed at the first read ("session expired
// before the request was sent"); it waits instead, and returns nil once
// the link healed and the last flat election is gone.
func TestWaitMigratedOutlastsACutOff(t *testing.T) {
	root := newRoot(t)
	s := connect(t, 10*time.Second)
	acl := zk.WorldACL(zk.PermAll)
	flat := root + "/shards/7" // a flat election no member follows: the move waits on it
	for _, p := range []string{"/partition-test", root, root + "/members", root + "/owners", root + "/shards", flat} {
		if _, err := s.Create(t.Context(), p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	proxy, opSess, op := operatorBehind(t, root)
	if changed, err := op.MigrateToBuckets(t.Context()); err != nil || !changed {
		t.Fatalf("MigrateToBuckets = %v, %v; want started", changed, err)
	}
	cutOff(t, proxy, opSess)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- op.WaitMigrated(ctx) }()
	stillWaiting(t, proxy, cutOffTimeout, "WaitMigrated", done)
	if err := s.Delete(t.Context(), flat, -1); err != nil {
		t.Fatalf("delete the flat election: %v", err)
	}
	returnsOnceHealed(t, "WaitMigrated (the flat election gone)", done)
	if data, _, err := s.Get(t.Context(), root+"/buckets"); err != nil || string(data) != `{"layout":"buckets","buckets":1024}` {
		t.Errorf("<root>/buckets holds %q (%v), want the bucketed layout without the move's mark", data, err)
	}
}

// TestRunStartedWhileCutOffLeadsOnceTheSessionIsBack: a member's Run is
// started while its session is cut off past the session timeout (a daemon
// starting during a partition, its session expired). Run does not fail
// with the expired session's error: it waits, and leads every shard once
// the link healed (a new session).
func TestRunStartedWhileCutOffLeadsOnceTheSessionIsBack(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	sess := connectTo(t, proxy.Addrs(), cutOffTimeout)
	cutOff(t, proxy, sess)
	tr, shards := newTracker(), []string{"0", "1", "2", "3"}
	m := startMemberOn(t, sess, newRoot(t), "a", shards, tr)
	stillWaiting(t, proxy, cutOffTimeout, "Run", m.done)
	waitFor(t, 60*time.Second, "the member to lead every shard once the link healed", func() (bool, string) {
		select {
		case err := <-m.done:
			t.Fatalf("Run ended once the link healed: %v", err)
		default:
		}
		return len(m.m.Leaderships()) == len(shards), ""
	})
	tr.check(t, false)
}

// TestWaitDrainedOutlastsACutOff: `zkelect shards drain --wait`
// (Operator.WaitDrained) is started while the operator's session is cut
// off past the session timeout. It once failed at its start with the
// expired session's error (the view's first listing); it waits instead,
// and returns nil once the link healed and the drained member leads
// nothing.
func TestWaitDrainedOutlastsACutOff(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 4)
	ms := []*member{startMember(t, root, "a", shards, tr), startMember(t, root, "b", shards, tr)}
	waitBalanced(t, shards, ms, 30*time.Second)
	proxy, opSess, op := operatorBehind(t, root)
	if changed, err := op.Drain(t.Context(), "b", "test"); err != nil || !changed {
		t.Fatalf("Drain(b) = %v, %v; want drained", changed, err)
	}
	cutOff(t, proxy, opSess)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- op.WaitDrained(ctx, "b") }()
	stillWaiting(t, proxy, cutOffTimeout, "WaitDrained", done)
	returnsOnceHealed(t, "WaitDrained", done)
	waitFor(t, 10*time.Second, "b to lead nothing once WaitDrained returned", func() (bool, string) {
		return len(ms[1].m.Leaderships()) == 0, ""
	})
}
