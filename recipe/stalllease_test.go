package recipe_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestLeaseEndsBeforeExpiryAfterAStallThenAPartition drives the interleaving that
// defeats a lease renewed from the gap between two syncs' send times: the
// link from the client to its follower stalls for 900 ms (the proxy holds
// the frames, then delivers them together, so syncs sent a sync interval
// apart arrive at once), the syncs are answered, and at once the follower
// loses its quorum leader (its quorum links fall silent before its next
// heartbeat answer). The quorum leader last heard of the session before
// the stall and expires it a session timeout after. In each of 10 trials,
// under both policies, the candidate's lease (with its policy's margin)
// must end before the quorum leader deletes the candidate's ephemeral
// znode (seen by a watcher connected to the quorum leader, so a little
// after it happened), and the leadership must end. The lease's end, not
// the instant the leadership's timer fired, is held against the deletion:
// on a loaded machine that timer fires late (a process pause, which the
// fencing token covers), and at load 20 it once did.
func TestLeaseEndsBeforeExpiryAfterAStallThenAPartition(t *testing.T) {
	const timeout = 2 * time.Second
	const trials = 10
	// Ticks of 100 ms (the leader rounds expiries up to a tick, so short
	// ticks leave it no slack to hide a lease too long); the follower
	// gives its leader up after 30 ticks, past the session timeout.
	ens := testenv.New(t, testenv.Options{Servers: 3, SyncLimit: 30, QuorumRelays: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*wait)
	defer cancel()
	q, err := ens.QuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := (q + 1) % 3
	obs := session(t, ens.Addrs()[q], recipe.WithSessionTimeout(4*time.Second))
	for _, policy := range []recipe.ConnectionLossPolicy{recipe.EndOnSuspend(), recipe.TolerateSuspend(50 * time.Millisecond)} {
		t.Run(policy.String(), func(t *testing.T) {
			for trial := range trials {
				stallThenPartition(t, ens, f, obs, policy, trial)
			}
		})
	}
}

// stallThenPartition runs one trial: a candidate on follower f leads,
// its link stalls and is delivered, f loses the quorum, and the lease
// must end before its znode is deleted.
func stallThenPartition(t *testing.T, ens *testenv.Cluster, f int, obs *recipe.Session, policy recipe.ConnectionLossPolicy, trial int) {
	t.Helper()
	const timeout = 2 * time.Second
	p, err := testenv.ListenProxy([]string{ens.Addrs()[f]})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s, err := recipe.Connect(ctx, []string{p.ConnectString()}, recipe.WithSessionTimeout(timeout))
	if err != nil {
		t.Fatalf("trial %d: connect: %v", trial, err)
	}
	defer s.Close()
	c, err := recipe.NewCandidate(s, electionPath(t), recipe.WithConnectionLossPolicy(policy), recipe.WithCloseTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l := lead(t, c)
	_, _, gone, err := obs.ExistsW(ctx, l.Znode())
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	go func() {
		<-l.Done()
		ended <- time.Now()
	}()

	p.Blackhole()
	time.Sleep(800 * time.Millisecond) // the fault's length, not a synchronisation
	synced := make(chan error, 1)
	go func() { synced <- s.Sync(ctx, "/") }() // held with the lease's syncs, answered after them
	time.Sleep(100 * time.Millisecond)
	p.Heal()
	healed := time.Now()
	// The held syncs are answered together: cut the follower off from its
	// quorum leader at once, before its next heartbeat answer.
	select {
	case err := <-synced:
		if err != nil {
			t.Fatalf("trial %d: sync through the stall: %v", trial, err)
		}
	case <-time.After(wait):
		t.Fatalf("trial %d: the stalled sync was not answered within %v", trial, wait)
	}
	if err := ens.SilenceQuorum(f); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ens.HealQuorum(f) }()
	silenced := time.Now()
	t.Logf("trial %d: partition %v after the stall was delivered", trial, silenced.Sub(healed))

	var deleted time.Time
	select {
	case <-gone:
		deleted = time.Now()
	case <-time.After(wait):
		t.Fatalf("trial %d: the quorum leader did not delete %s within %v of the partition", trial, l.Znode(), wait)
	}
	// The lease as the candidate computed it (nothing renews it once the
	// follower is cut off): its end must come before the deletion. That
	// holds on a loaded machine too, where the timer ending the
	// leadership at that instant may fire late (a process pause, which
	// fencing covers).
	if end, ok := recipe.LeaseEnd(c, l); ok && !end.Before(deleted) {
		t.Fatalf("trial %d: the lease ran until %v after its znode was deleted", trial, end.Sub(deleted))
	}
	select {
	case end := <-ended:
		t.Logf("trial %d: leadership ended %v after the partition, znode deleted %v after it (%v before)",
			trial, end.Sub(silenced).Round(time.Millisecond), deleted.Sub(silenced).Round(time.Millisecond),
			deleted.Sub(end).Round(time.Millisecond))
	case <-time.After(wait):
		t.Errorf("trial %d: the leadership did not end within %v of its znode's deletion", trial, wait)
	}
}
