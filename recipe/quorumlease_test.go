package recipe_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

func TestLeaseEndsBeforeTheQuorumLeaderExpiresAFollowersSession(t *testing.T) {
	// A is connected only to follower F, B only to the quorum leader; then
	// F's link to the leader falls silent. The leader stops hearing of A's
	// session and expires it after its timeout, and B leads; F keeps
	// answering A's pings and reads until it gives the leader up (syncLimit
	// × tick = 3 s). A lease renewed by F's answers outlives A's session:
	// two leaders believe. Under either connection-loss policy, A's
	// leadership must end no later than B's starts.
	const timeout = time.Second
	ens := testenv.New(t, testenv.Options{Servers: 3, SyncLimit: 30, QuorumRelays: true})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	q, err := ens.QuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := (q + 1) % 3
	as := session(t, ens.Addrs()[f], recipe.WithSessionTimeout(timeout))
	bs := session(t, ens.Addrs()[q], recipe.WithSessionTimeout(timeout))
	policies := []recipe.ConnectionLossPolicy{recipe.EndOnSuspend(), recipe.TolerateSuspend(timeout / 4)}
	type race struct {
		policy recipe.ConnectionLossPolicy
		aEnd   chan time.Time
		b      <-chan campaignResult
	}
	var races []race
	for _, p := range policies {
		path := electionPath(t)
		a := candidate(t, as, path, recipe.WithConnectionLossPolicy(p), recipe.WithCloseTimeout(time.Second))
		l := lead(t, a)
		r := race{policy: p, aEnd: make(chan time.Time, 1), b: campaignAsync(ctx, candidate(t, bs, path))}
		go func() {
			<-l.Done()
			r.aEnd <- time.Now()
		}()
		notYet(t, r.b, timeout/2, "B led beside A before the fault")
		races = append(races, r)
	}
	t.Cleanup(func() { _ = ens.HealQuorum(f) }) // lets A's server learn of the expiry, for the cleanup

	if err := ens.SilenceQuorum(f); err != nil {
		t.Fatal(err)
	}
	silenced := time.Now()
	for _, r := range races {
		b := awaitResult(t, r.b, "B to lead once the quorum leader expired A's session")
		if b.err != nil {
			t.Fatalf("%v: B's campaign: %v", r.policy, b.err)
		}
		select {
		case end := <-r.aEnd:
			if end.After(b.at) {
				t.Errorf("%v: A's leadership ended %v after the silence, B's began %v after it: %v of two leaders",
					r.policy, end.Sub(silenced), b.at.Sub(silenced), end.Sub(b.at))
				continue
			}
			t.Logf("%v: A's leadership ended %v after the silence, B's began %v after it",
				r.policy, end.Sub(silenced), b.at.Sub(silenced))
		default:
			t.Errorf("%v: B leads (%v after the silence) while A still believes it leads", r.policy, b.at.Sub(silenced))
		}
	}
}
