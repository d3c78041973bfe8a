package routing_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
	"github.com/zkelect/zkelect/recipe"
)

// TestRouterOverDaemonsFailsOverFromAPausedDaemon: a router follows the
// /v1/watch stream of one of two daemons with a 300ms heartbeat. That
// daemon's answers then hang, as a paused process's do (its stream goes
// silent, not closed): the router leaves it within its heartbeat bound
// for the other daemon, whose stream carries the next change (the paused
// daemon's member stopped, every shard resigned to the other) while the
// first stays paused.
func TestRouterOverDaemonsFailsOverFromAPausedDaemon(t *testing.T) {
	root, shards := testRoot(t), partition.Range(0, 8)
	ma, mb := runMember(t, root, "a", shards), runMember(t, root, "b", shards)
	ga, gb := &gate{}, &gate{}
	ua, ub := serveDaemon(t, root, "a", shards, ma, ga), serveDaemon(t, root, "b", shards, mb, gb)
	beat := 300 * time.Millisecond
	c, err := routing.New(routing.Config{Source: routing.Daemons([]string{ua, ub}, beat), Shards: shards, StaleAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, c)
	eventually(t, 30*time.Second, "every shard routed, a and b both leading", func() (bool, string) {
		leads := map[string]int{}
		for _, s := range shards {
			r, err := c.Leader(s)
			if err != nil {
				return false, s + ": " + err.Error()
			}
			leads[r.Member]++
		}
		return leads["a"] > 0 && leads["b"] > 0, ""
	})
	var followed *gate
	stopFollowed, other := ma.stop, "b"
	eventually(t, 30*time.Second, "the router to follow exactly one daemon's stream", func() (bool, string) {
		na, nb := ga.streaming(), gb.streaming()
		switch {
		case na == 1 && nb == 0:
			followed = ga
		case na == 0 && nb == 1:
			followed, stopFollowed, other = gb, mb.stop, "a"
		}
		return followed != nil, fmt.Sprintf("streams: a %d, b %d", na, nb)
	})
	followed.pause()
	paused := time.Now()
	eventually(t, 10*time.Second, "the view stale once the followed stream went silent", func() (bool, string) {
		_, err = c.Leader("0")
		return errors.Is(err, routing.ErrStale) || c.Staleness() > 2*beat, c.Staleness().String() // the source leaves a daemon after 3 silent beats
	})
	eventually(t, 30*time.Second, "the router to follow the other daemon: a fresh view again", func() (bool, string) {
		s := c.Staleness()
		return s >= 0 && s < 2*beat, s.String()
	})
	t.Logf("fresh again %v after a paused (heartbeat %v, bound %d beats)", time.Since(paused).Round(time.Millisecond), beat, 3)
	stopFollowed()
	eventually(t, 30*time.Second, "every shard routed to the other daemon's member, through its stream, the first still paused", func() (bool, string) {
		return allRoutedTo(c, shards, other)
	})
}

// TestRouterOverDaemonsIsStaleWhileTheDaemonsSessionIsCutOff: a router
// follows the only daemon, whose member's ZooKeeper link then goes
// through a blackholed proxy. The daemon's HTTP stream stays open, but it
// must stop vouching for its view: the router reports ErrStale within its
// bound instead of the old leaders with a nil error.
func TestRouterOverDaemonsIsStaleWhileTheDaemonsSessionIsCutOff(t *testing.T) {
	root, shards := testRoot(t), partition.Range(0, 4)
	proxy := zkc.NewProxyT(t)
	ma := runMemberOn(t, connect(t, recipe.WithDialer(proxy.Dialer())), root, "a", shards)
	ua := serveDaemon(t, root, "a", shards, ma, &gate{})
	beat := 200 * time.Millisecond
	c, err := routing.New(routing.Config{Source: routing.Daemons([]string{ua}, beat), Shards: shards, StaleAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, c)
	eventually(t, 30*time.Second, "every shard routed to a", func() (bool, string) {
		return allRoutedTo(c, shards, "a")
	})
	proxy.Blackhole()
	t.Cleanup(proxy.Heal)
	eventually(t, 30*time.Second, "ErrStale once the daemon's session is cut off", func() (bool, string) {
		_, err := c.Leader("0")
		return errors.Is(err, routing.ErrStale), errString(err)
	})
}
