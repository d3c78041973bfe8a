package zkconn

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// TestRollingRestartMovingTheLeaderTwice: three servers behind names
// (a private hosts file), each restarted on a new address, the quorum
// leader first and then the next quorum leader at once (two elections in
// a row), then the third; with 2s sessions the client keeps its session
// and its ephemeral znode. Before, a reconnect waited on the resolver's 5s
// cache of the hosts file (the moved server's old address) and on
// go-zookeeper's fixed second after a round in which no server answered,
// while the 2s session ran out.
func TestRollingRestartMovingTheLeaderTwice(t *testing.T) {
	testenv.WithPrivateHosts(t, func(t *testing.T, h *testenv.Hosts) {
		zks := testenv.New(t, testenv.Options{Servers: 3, TickTime: rollingTick, MaxSessionTimeout: 20 * time.Second})
		named, err := testenv.NameServers(zks, h, []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = named.Close() })
		var log logBuffer
		c := dialT(t, named.Servers(), Config{Timeout: 2 * time.Second, Log: zerolog.New(&log)})
		gaps := &gapSink{}
		c.Subscribe(gaps)
		path, stat := ephemeral(t, c, "rolling")
		id := c.ID()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		var moved []int
		move := func(i int, await bool) {
			t.Helper()
			ip := fmt.Sprintf("127.0.0.%d", 21+10*len(moved)+i)
			start := time.Now()
			if err := named.MoveStart(i, ip); err != nil {
				t.Fatal(err)
			}
			moved = append(moved, i)
			if !await {
				t.Logf("server %d stopped and started on %s in %v", i, ip, time.Since(start).Round(time.Millisecond))
				return
			}
			if err := named.AwaitServing(ctx, i); err != nil {
				t.Fatal(err)
			}
			t.Logf("server %d restarted on %s in %v", i, ip, time.Since(start).Round(time.Millisecond))
			if got := c.ID(); got != id && got != 0 {
				t.Fatalf("session %#x lost after server %d moved (now %#x); log:\n%s", id, i, got, log.String())
			}
		}
		first, err := zks.WaitQuorumLeader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		move(first, false) // the next restart follows the next election, not the server's return
		second, err := zks.WaitQuorumLeader(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		move(second, true)
		if err := named.AwaitServing(ctx, first); err != nil {
			t.Fatal(err)
		}
		move(3-first-second, true)
		waitFor(t, time.Minute, "the session usable after the rolling restart", func() bool {
			got, ok := c.Usable()
			return ok || (got != id && got != 0)
		})
		if got := c.ID(); got != id {
			t.Fatalf("session %#x lost in the rolling restart (now %#x); log:\n%s", id, got, log.String())
		}
		checkOwned(t, c, path, stat.Czxid, id)
		t.Logf("longest time without a connection: %v", gaps.longest().Round(time.Millisecond))
	})
}

// rollingTick is the servers' tickTime in the rolling restart: elections
// and syncs of a few ticks, as with a production tickTime against 2s
// sessions.
const rollingTick = 500 * time.Millisecond

// gapSink records the longest time from a Disconnected event to the next
// Connected one.
type gapSink struct {
	mu    sync.Mutex
	since time.Time // the open gap's start; zero when connected
	max   time.Duration
}

func (g *gapSink) SessionChanged(ev Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case ev.Kind == Connected && !g.since.IsZero():
		g.max = max(g.max, time.Since(g.since))
		g.since = time.Time{}
	case ev.Kind != Connected && g.since.IsZero():
		g.since = time.Now()
	}
}

func (g *gapSink) NodeChanged(zk.Event) {}

func (g *gapSink) longest() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.max
}
