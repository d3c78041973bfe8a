package recipe_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

func TestZombieServerIsLeftForAnother(t *testing.T) {
	// The session's server keeps answering pings but no request: without
	// a request deadline the connection looks healthy and the campaign
	// waits for ever. With it, the session leaves that server after one
	// session timeout (2s) and the campaign goes on on another.
	ens := testenv.New(t, testenv.Options{Servers: 3})
	p := ens.NewProxyT(t)
	s := session(t, p.ConnectString())
	zombie := slices.Index(p.Addrs(), s.Conn().Server())
	if zombie < 0 {
		t.Fatalf("session on %q, not one of the proxy's %v", s.Conn().Server(), p.Addrs())
	}
	if err := p.ForwardOnlyPings(zombie); err != nil {
		t.Fatal(err)
	}
	c := candidate(t, s, electionPath(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	l, err := c.Campaign(ctx)
	if err != nil {
		t.Fatalf("campaign with the session's server %d answering only pings: %v after %v (connected=%v)",
			zombie, err, time.Since(start), s.Connected())
	}
	if now := slices.Index(p.Addrs(), s.Conn().Server()); now == zombie {
		t.Fatalf("led (token %v) while still on the zombie server %d", l.Token(), zombie)
	}
	t.Logf("led %v after the server went zombie", time.Since(start).Round(time.Millisecond))
}

func TestCloseWaitsOneCloseTimeoutForAnUnansweredDelete(t *testing.T) {
	// The server answers pings but not the delete: Close gives up after
	// its close timeout once, not once for the reply and again for the
	// calls in flight (which took twice the close timeout). The bound, 1.5
	// close timeouts, leaves the single wait 3s for a loaded machine and
	// stays 3s below the double wait (12s).
	const closeTimeout = 6 * time.Second
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, electionPath(t), recipe.WithCloseTimeout(closeTimeout))
	lead(t, c)
	if err := p.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := c.Close()
	took := time.Since(start)
	p.Heal()
	if !errors.Is(err, recipe.ErrCleanupIncomplete) {
		t.Fatalf("close with the delete unanswered: %v, want ErrCleanupIncomplete", err)
	}
	if took >= closeTimeout+closeTimeout/2 {
		t.Fatalf("close took %v with a %v close timeout: it waited twice", took, closeTimeout)
	}
}
