package routing_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
	"github.com/zkelect/zkelect/recipe"
)

// TestHashKeyIsFixed pins HashKey: a change of these values moves every
// router's keys, so it is a change of the documented function.
func TestHashKeyIsFixed(t *testing.T) {
	shards := partition.Range(0, 64)
	got := strings.Join([]string{routing.HashKey("a", shards), routing.HashKey("user-1", shards), routing.HashKey("order/12345", shards)}, " ")
	if got != pinnedHashes {
		t.Errorf("HashKey of a, user-1, order/12345 over 64 shards = %s, pinned %s", got, pinnedHashes)
	}
	// Appending shards moves only keys to the new shards.
	more := partition.Range(0, 80)
	for i := range 2000 {
		k := fmt.Sprint("key-", i)
		if a, b := routing.HashKey(k, shards), routing.HashKey(k, more); a != b && !isNew(b, shards) {
			t.Fatalf("key %s moved from %s to %s, an old shard", k, a, b)
		}
	}
	if routing.HashKey("x", nil) != "" {
		t.Error("HashKey over no shards is not empty")
	}
}

const pinnedHashes = "31 47 5" // also computed by an independent Python implementation of the two functions

func isNew(s string, old []string) bool {
	for _, o := range old {
		if o == s {
			return false
		}
	}
	return true
}

// TestRouterOverZooKeeperFollowsTheElections: two members lead 8 shards;
// the router routes every key to the member its shard's election has as
// leader, with the member's address, labels and token, and follows a
// graceful stop (every shard resigned to the other member). A record
// written by x, who is no member, claiming shard 0 with the largest token
// routes nothing to x.
func TestRouterOverZooKeeperFollowsTheElections(t *testing.T) {
	root, shards, a, obs, c := routedPair(t)
	eventually(t, 30*time.Second, "every shard routed as the elections say", func() (bool, string) {
		owners, err := partition.Owners(t.Context(), obs, root)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range shards {
			r, err := c.Leader(s)
			o := owners[s]
			if err != nil || o.Member == "" || r.Member != o.Member || r.Token != o.Token || r.Address != o.Member+".example:8080" || r.Labels["zone"] != o.Member {
				return false, fmt.Sprintf("shard %s: route %+v (%v), election %+v", s, r, err, o)
			}
		}
		return true, ""
	})
	if r, err := c.Route("some key"); err != nil || r.Shard != routing.HashKey("some key", shards) {
		t.Errorf("Route(some key) = %+v, %v", r, err)
	}
	sawX := make(chan partition.Cluster, 1) // a view that read x's record
	wctx, wcancel := context.WithCancel(t.Context())
	wdone := make(chan error, 1)
	go func() {
		wdone <- partition.WatchCluster(wctx, obs, root, func(cl partition.Cluster) {
			if _, ok := cl.Members["x"]; ok {
				select {
				case sawX <- cl:
				default:
				}
			}
		})
	}()
	forged := fmt.Appendf(nil, `{"session":%d,"leading":{"0":9000000000000}}`, obs.ID())
	if _, err := obs.Create(t.Context(), root+"/owners/x", forged, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.Create(t.Context(), root+"/members/x", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	select {
	case cl := <-sawX:
		if l := cl.Leaders["0"]; l.Member == "x" {
			t.Errorf("the view that read x's forged record shows x leading shard 0: %+v", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("timed out after 30s waiting for a view of the cluster with x among its members")
	}
	wcancel()
	if err := <-wdone; err != nil {
		t.Errorf("WatchCluster: %v", err)
	}
	if r, err := c.Leader("0"); r.Member == "x" {
		t.Errorf("shard 0 routed to x, from its forged record: %+v %v", r, err)
	}
	a.stop()
	eventually(t, 30*time.Second, "every shard routed to b after a stopped", func() (bool, string) { return allRoutedTo(c, shards, "b") })
	if s := c.Staleness(); s < 0 || s > routing.DefaultStaleAfter {
		t.Errorf("staleness %v with a connected session", s)
	}
}

// TestRouterRefusesWhatItCannotUse: a client needs a source and shards.
func TestRouterRefusesWhatItCannotUse(t *testing.T) {
	if _, err := routing.New(routing.Config{Shards: []string{"0"}}); err == nil {
		t.Error("New without a source succeeded")
	}
	if _, err := routing.New(routing.Config{Source: routing.Daemons([]string{"http://127.0.0.1:1"}, 0)}); !errors.Is(err, routing.ErrNoShards) {
		t.Errorf("New without shards: %v", err)
	}
	for _, beat := range []time.Duration{-time.Millisecond, 99 * time.Millisecond, 16 * time.Second} {
		_, err := routing.New(routing.Config{Source: routing.Daemons([]string{"http://127.0.0.1:1"}, beat), Shards: []string{"0"}})
		if he := (*routing.HeartbeatError)(nil); !errors.As(err, &he) || he.Heartbeat != beat {
			t.Errorf("New with a Daemons heartbeat of %v: %v, want a *HeartbeatError", beat, err)
		}
	}
	for _, beat := range []time.Duration{0, routing.MinHeartbeat, routing.MaxHeartbeat} {
		if _, err := routing.New(routing.Config{Source: routing.Daemons([]string{"http://127.0.0.1:1"}, beat), Shards: []string{"0"}}); err != nil {
			t.Errorf("New with a Daemons heartbeat of %v: %v", beat, err)
		}
	}
}

// routedPair runs members a and b on a new root of 8 shards and a router
// over ZooKeeper on an observer's session of its own; it returns the
// root, the shards, a, the observer's session and the running router.
func routedPair(t *testing.T) (string, []string, *member, *recipe.Session, *routing.Client) {
	t.Helper()
	root, shards := testRoot(t), partition.Range(0, 8)
	a := runMember(t, root, "a", shards)
	runMember(t, root, "b", shards)
	obs := connect(t)
	c, err := routing.New(routing.Config{Source: routing.ZooKeeper(obs, root), Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, c)
	return root, shards, a, obs, c
}
