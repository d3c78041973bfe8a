package recipe_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

func TestEnsembleFailoverKeepsTolerantLeader(t *testing.T) {
	// Ticks of 200ms allow a 4s session: room for go-zookeeper's reconnect
	// (it pauses 1s after trying every server) during a quorum election.
	ens := testenv.New(t, testenv.Options{Servers: 3, TickTime: 200 * time.Millisecond})
	path := electionPath(t)
	ls := session(t, ens.ConnectString(), recipe.WithSessionTimeout(4*time.Second))
	fs := session(t, ens.ConnectString(), recipe.WithSessionTimeout(4*time.Second))
	leader := candidate(t, ls, path, recipe.WithConnectionLossPolicy(recipe.TolerateSuspend(500*time.Millisecond)))
	l := lead(t, leader)
	fres := campaignAsync(context.Background(), candidate(t, fs, path))
	notYet(t, fres, 100*time.Millisecond, "follower led beside the leader")
	id := ls.ID()

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	q, err := ens.QuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	connected := slices.Index(ens.Addrs(), ls.Conn().Server())
	t.Logf("killing quorum leader %d (client on %d)", q, connected)
	if err := ens.Kill(q); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the leader's session to reconnect", ls.Connected)
	notYet(t, fres, time.Second, "a second leader appeared after the quorum leader died")
	if !l.Leading() || ls.ID() != id {
		t.Fatalf("leadership lost (%v) or session changed (%x -> %x) across the quorum leader's death", l.Err(), id, ls.ID())
	}

	// Now kill the server the leader's client is connected to (if it is
	// not the dead one), keeping a quorum of two.
	if err := ens.Restart(ctx, q); err != nil {
		t.Fatal(err)
	}
	connected = slices.Index(ens.Addrs(), ls.Conn().Server())
	if connected < 0 || connected == q {
		t.Fatalf("client on server %d after the failover", connected)
	}
	t.Logf("killing the leader client's server %d", connected)
	if err := ens.Kill(connected); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the leader's session to reconnect", func() bool {
		return ls.Connected() && ls.Conn().Server() != ens.Addrs()[connected]
	})
	notYet(t, fres, time.Second, "a second leader appeared after the client's server died")
	if !l.Leading() || ls.ID() != id {
		t.Fatalf("leadership lost (%v) or session changed (%x -> %x) across its server's death", l.Err(), id, ls.ID())
	}
}
