package routing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
)

// TestWaitLeaderWaitsForTheViewToShowALeader: with the only member
// stopped, no shard has a leader in the view; WaitLeader bounded by a
// short ctx fails with ErrNoLeader and the ctx's deadline, and one bounded
// by a long ctx returns the route of the member that starts leading
// while it waits.
func TestWaitLeaderWaitsForTheViewToShowALeader(t *testing.T) {
	root, shards := testRoot(t), partition.Range(0, 4)
	a := runMember(t, root, "a", shards)
	obs := connect(t)
	c, err := routing.New(routing.Config{Source: routing.ZooKeeper(obs, root), Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	runClient(t, c)
	eventually(t, 30*time.Second, "every shard routed to a", func() (bool, string) { return allRoutedTo(c, shards, "a") })
	a.stop()
	eventually(t, 30*time.Second, "no leader in view for shard 0", func() (bool, string) {
		r, err := c.Leader("0")
		return errors.Is(err, routing.ErrNoLeader), r.Member + " " + errString(err)
	})

	short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if r, err := c.WaitLeader(short, "0"); !errors.Is(err, routing.ErrNoLeader) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitLeader with no leader, bounded by 300ms = %+v, %v; want ErrNoLeader and DeadlineExceeded", r, err)
	}

	type result struct {
		r   routing.Route
		err error
	}
	got := make(chan result, 1)
	long, cancelLong := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancelLong()
	go func() {
		r, err := c.WaitLeader(long, "0")
		got <- result{r, err}
	}()
	runMember(t, root, "b", shards)
	res := <-got
	if res.err != nil || res.r.Member != "b" || res.r.Shard != "0" || res.r.Token == 0 {
		t.Fatalf("WaitLeader while b starts = %+v, %v; want shard 0's route to b", res.r, res.err)
	}
	if r, err := c.WaitRoute(long, "some key"); err != nil || r.Member != "b" || r.Shard != routing.HashKey("some key", shards) {
		t.Errorf("WaitRoute(some key) with b leading = %+v, %v", r, err)
	}
}

// TestChangesListsTheShardsWhoseRouteChanged: Changes first lists every
// shard in the view, then each shard whose route changed: when member a
// stops, every shard it led is listed again, and Leader then gives b.
func TestChangesListsTheShardsWhoseRouteChanged(t *testing.T) {
	_, shards, a, _, c := routedPair(t)
	eventually(t, 30*time.Second, "every shard routed, a leading some", func() (bool, string) {
		n := 0
		for _, s := range shards {
			r, err := c.Leader(s)
			if err != nil {
				return false, s + ": " + err.Error()
			}
			if r.Member == "a" {
				n++
			}
		}
		return n > 0, "a leads none"
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	changes := c.Changes(ctx)
	first := <-changes
	if len(first) != len(shards) {
		t.Fatalf("the first receive lists %v, want every shard of the view: %v", first, shards)
	}
	ofA := map[string]bool{}
	for _, s := range shards {
		if r, _ := c.Leader(s); r.Member == "a" {
			ofA[s] = true
		}
	}
	a.stop()
	for len(ofA) > 0 {
		select {
		case listed, open := <-changes:
			if !open {
				t.Fatalf("Changes closed with a's shards %v never listed routed to b", ofA)
			}
			for _, s := range listed {
				if r, err := c.Leader(s); err == nil && r.Member == "b" {
					delete(ofA, s)
				}
			}
		case <-ctx.Done():
			t.Fatalf("timed out waiting for Changes to list a's shards %v routed to b", ofA)
		}
	}
}
