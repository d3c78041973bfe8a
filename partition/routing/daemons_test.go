package routing_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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

// TestRouterOverDaemonsFailsOverFromADaemonOutOfSync: a router follows
// daemon a's /v1/watch stream (heartbeat 300ms), b's being second in its
// list. a's member's link to ZooKeeper is cut and its reconnection answers
// only pings: a's session is connected, its picture cannot be read again,
// and its open stream goes silent. The router leaves a's stream for b's,
// whose snapshot makes its view fresh again, every shard routed, while a's
// /v1/watch refuses new streams.
func TestRouterOverDaemonsFailsOverFromADaemonOutOfSync(t *testing.T) {
	root, shards := testRoot(t), partition.Range(0, 8)
	proxy := zkc.NewProxyT(t)
	ma := runMemberOn(t, connect(t, recipe.WithDialer(proxy.Dialer())), root, "a", shards)
	mb := runMember(t, root, "b", shards)
	ga, gb := &gate{}, &gate{}
	ua, ub := serveDaemon(t, root, "a", shards, ma, ga), serveDaemon(t, root, "b", shards, mb, gb)
	eventually(t, 30*time.Second, "a's /v1/watch to accept streams (its picture in sync)", func() (bool, string) {
		code := watchStatus(t, ua)
		return code == http.StatusOK, fmt.Sprint(code)
	})
	beat := 300 * time.Millisecond
	c, err := routing.New(routing.Config{Source: routing.Daemons([]string{ua, ub}, beat), Shards: shards, StaleAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, c)
	eventually(t, 30*time.Second, "the router on a's stream, every shard routed", func() (bool, string) {
		for _, s := range shards {
			if _, err := c.Leader(s); err != nil {
				return false, s + ": " + err.Error()
			}
		}
		return ga.streaming() == 1 && gb.streaming() == 0, fmt.Sprintf("streams: a %d, b %d", ga.streaming(), gb.streaming())
	})

	if err := proxy.ForwardOnlyPings(0); err != nil {
		t.Fatal(err)
	}
	reconnected := ma.sess.NextConnect()
	proxy.Cut()
	t.Cleanup(proxy.Heal)
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out after 30s waiting for a's session to reconnect (pings only)")
	}
	eventually(t, 30*time.Second, "the router to leave a's silent stream for b's, its view fresh again", func() (bool, string) {
		s := c.Staleness()
		return ga.streaming() == 0 && gb.streaming() == 1 && s >= 0 && s < 2*beat,
			fmt.Sprintf("streams: a %d, b %d; staleness %v", ga.streaming(), gb.streaming(), s)
	})
	for _, s := range shards {
		if r, err := c.Leader(s); err != nil {
			t.Errorf("shard %s through b's stream: %+v, %v", s, r, err)
		}
	}
	if code := watchStatus(t, ua); code != http.StatusServiceUnavailable {
		t.Errorf("a's /v1/watch answers %d while its picture cannot be read again, want 503", code)
	}
}

// watchStatus opens url's /v1/watch and returns its status (0: no answer
// within 5s).
func watchStatus(t *testing.T, url string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/watch", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
