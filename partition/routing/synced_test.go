package routing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
	"github.com/zkelect/zkelect/recipe"
)

// TestRouterOverZooKeeperIsStaleUntilTheViewIsReadAgainAfterAReconnect:
// the router's link to ZooKeeper is cut and its reconnection answers only
// pings (the watch's re-add and the root's listing go unanswered), so its
// session is connected but its view cannot be in sync: member a stops
// meanwhile and b leads every shard. Route must fail with ErrStale once
// StaleAfter has passed, not serve a's routes as fresh because the session
// is connected; once the link heals and the root is read again, every
// shard routes to b, fresh.
func TestRouterOverZooKeeperIsStaleUntilTheViewIsReadAgainAfterAReconnect(t *testing.T) {
	root, shards := testRoot(t), partition.Range(0, 8)
	a := runMember(t, root, "a", shards)
	b := runMember(t, root, "b", shards)
	p := zkc.NewProxyT(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	obs, err := recipe.Connect(ctx, p.Addrs(), recipe.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatalf("connect the router through the proxy: %v", err)
	}
	t.Cleanup(func() { obs.Close() })
	const staleAfter = 500 * time.Millisecond
	c, err := routing.New(routing.Config{Source: routing.ZooKeeper(obs, root), Shards: shards, StaleAfter: staleAfter})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, c)
	eventually(t, 30*time.Second, "every shard routed, a leading some", func() (bool, string) {
		led := 0
		for _, s := range shards {
			r, err := c.Leader(s)
			if err != nil {
				return false, s + ": " + err.Error()
			}
			if r.Member == "a" {
				led++
			}
		}
		return led > 0, fmt.Sprintf("a leads %d", led)
	})

	if err := p.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	a.stop()
	eventually(t, 30*time.Second, "b leading every shard", func() (bool, string) {
		return len(b.mgr.Leaderships()) == len(shards), fmt.Sprint(b.mgr.Leaderships())
	})
	eventually(t, 30*time.Second, "the router's session connected again (pings only)", func() (bool, string) {
		return obs.Connected(), "disconnected"
	})
	eventually(t, 10*time.Second, "Route to fail with ErrStale while the view cannot be read again", func() (bool, string) {
		r, err := c.Leader(shards[0])
		return errors.Is(err, routing.ErrStale), fmt.Sprintf("%+v %v (session connected: %v)", r, err, obs.Connected())
	})

	p.Heal() // the unanswered requests stay so: the request deadline ends that connection
	eventually(t, 60*time.Second, "every shard routed to b, fresh, once the view is read again", func() (bool, string) {
		return allRoutedTo(c, shards, "b")
	})
}
