package recipe_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// watchCount returns how many (session, path) watches the server holds on
// path and below, from the four-letter word wchc.
func watchCount(t testing.TB, c *testenv.Cluster, path string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	out, err := c.FourLetterWord(ctx, 0, "wchc")
	if err != nil {
		t.Fatalf("wchc: %v", err)
	}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if p := strings.TrimSpace(l); p == path || strings.HasPrefix(p, path+"/") {
			n++
		}
	}
	return n
}

func TestCloseDeletesZnodeInEveryState(t *testing.T) {
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString())
	other := session(t, zkc.ConnectString())

	t.Run("leading", func(t *testing.T) {
		path := electionPath(t)
		c := candidate(t, s, path)
		l := lead(t, c)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(l.Err(), recipe.ErrClosed) {
			t.Fatalf("leadership ended with %v, want ErrClosed", l.Err())
		}
		if kids := children(t, raw, path); len(kids) != 0 {
			t.Fatalf("znodes left: %v", kids)
		}
		if w := watchCount(t, zkc, path); w != 0 {
			t.Fatalf("%d watches left on the server", w)
		}
	})
	t.Run("waiting", func(t *testing.T) {
		path := electionPath(t)
		first := candidate(t, other, path)
		lead(t, first)
		c := candidate(t, s, path)
		res := campaignAsync(context.Background(), c)
		eventually(t, "the waiting candidate's znode", func() bool { return len(children(t, raw, path)) == 2 })
		// The leader's on its znode; the waiting candidate's on its
		// predecessor and on its own znode.
		eventually(t, "the waiting candidate's watches", func() bool { return watchCount(t, zkc, path) == 3 })
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if r := awaitResult(t, res, "Campaign to return on Close"); !errors.Is(r.err, recipe.ErrClosed) {
			t.Fatalf("campaign returned %v, want ErrClosed", r.err)
		}
		if kids := children(t, raw, path); len(kids) != 1 {
			t.Fatalf("znodes: %v, want only the leader's", kids)
		}
		// Only the leader's watch on its own znode remains: the removal of
		// the predecessor's watch is sent behind the delete, once that is
		// answered, before Close returns.
		eventually(t, "only the leader's own watch to remain after Close", func() bool { return watchCount(t, zkc, path) == 1 })
	})
	t.Run("after reconnect", func(t *testing.T) {
		path := electionPath(t)
		p := zkc.NewProxyT(t)
		ps := session(t, p.ConnectString())
		c := candidate(t, ps, path)
		l := lead(t, c)
		p.Cut()
		awaitEnd(t, l, "suspension at the cut")
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if kids := children(t, raw, path); len(kids) != 0 {
			t.Fatalf("znodes left: %v", kids)
		}
	})
	t.Run("idempotent and unusable after", func(t *testing.T) {
		path := electionPath(t)
		c := candidate(t, s, path)
		lead(t, c)
		for range 3 {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Campaign(context.Background()); !errors.Is(err, recipe.ErrClosed) {
			t.Fatalf("campaign after close: %v, want ErrClosed", err)
		}
	})
}

func TestCloseUsesItsOwnDeadlineWhenCutOff(t *testing.T) {
	path := electionPath(t)
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, path, recipe.WithCloseTimeout(300*time.Millisecond))
	lead(t, c)
	p.Blackhole()
	start := time.Now()
	err := c.Close()
	if !errors.Is(err, recipe.ErrCleanupIncomplete) {
		t.Fatalf("close while cut off: %v, want ErrCleanupIncomplete", err)
	}
	// 300ms plus seconds for a loaded machine; ignoring the option would wait
	// DefaultCloseTimeout (10s).
	if took, bound := time.Since(start), recipe.DefaultCloseTimeout/2; took > bound {
		t.Fatalf("close took %v with a 300ms close timeout (bound %v)", took, bound)
	}
	p.Heal()
	// The session (and so the znode) lives on; closing it removes both.
	_ = s.Close()
	raw := rawConn(t, zkc.ConnectString())
	eventually(t, "the znode to vanish with the session", func() bool { return len(children(t, raw, path)) == 0 })
}

func TestStateIsNeverStale(t *testing.T) {
	path := electionPath(t)
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, path)
	l := lead(t, c)
	if !c.IsLeader() || c.Leadership() != l || l.Err() != nil {
		t.Fatal("accessors do not report the leadership")
	}
	observed := make(chan string, 1)
	go func() {
		<-l.Done()
		switch {
		case c.IsLeader(), c.Leadership() != nil:
			observed <- "candidate still says leader after Done"
		case l.Err() == nil, l.Context().Err() == nil, l.Leading():
			observed <- "leadership accessors still say leading after Done"
		default:
			observed <- ""
		}
	}()
	p.Cut()
	select {
	case msg := <-observed:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-time.After(wait):
		t.Fatal("leadership did not end at the cut")
	}
	if !errors.Is(context.Cause(l.Context()), recipe.ErrSuspended) {
		t.Fatalf("context cause %v, want ErrSuspended", context.Cause(l.Context()))
	}
}
