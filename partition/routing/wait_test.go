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
