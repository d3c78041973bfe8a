package testenv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/testenv"
)

func TestEnsembleStartsWithOneQuorumLeader(t *testing.T) {
	ctx := testContext(t)
	begin := time.Now()
	c, err := testenv.Start(ctx, testenv.Options{Servers: 3, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3-node ensemble serving after %v", time.Since(begin).Round(time.Millisecond))
	defer c.Close()
	leader, err := c.QuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quorum leader: server %d; connect string %s", leader, c.ConnectString())
	pids := []int{c.PID(0), c.PID(1), c.PID(2)}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	assertDead(t, pids...)
}

func TestEnsembleServesWithoutKilledLeaderWhichRejoins(t *testing.T) {
	ctx := testContext(t)
	c := testenv.New(t, testenv.Options{Servers: 3})
	old, err := c.QuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := c.PID(old)
	if err := c.Kill(old); err != nil {
		t.Fatal(err)
	}
	assertDead(t, pid)
	if err := c.Kill(old); !errors.Is(err, testenv.ErrNotRunning) {
		t.Fatalf("second Kill = %v, want ErrNotRunning", err)
	}
	if _, err := c.WaitQuorumLeader(ctx, old); err != nil {
		t.Fatal(err)
	}
	survivors := connect(t, c.ConnectString(), 2*time.Second)
	survivors.mustCreate(t, "/while-down", 0)

	if err := c.Restart(ctx, old); err != nil {
		t.Fatal(err)
	}
	if mode, err := c.Mode(ctx, old); err != nil || mode != "follower" {
		t.Fatalf("restarted server's mode = %q, %v; want follower", mode, err)
	}
	rejoined := connect(t, c.Addrs()[old], 2*time.Second)
	if _, err := rejoined.Sync("/while-down"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := rejoined.Exists("/while-down"); err != nil || !ok {
		t.Fatalf("restarted server: exists /while-down = %v, %v; want the write made while it was down", ok, err)
	}
}

func TestPausedQuorumLeaderIsReplaced(t *testing.T) {
	ctx := testContext(t)
	c := testenv.New(t, testenv.Options{Servers: 3})
	old, err := c.QuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Pause(old); err != nil {
		t.Fatal(err)
	}
	next, err := c.WaitQuorumLeader(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quorum leader %d paused, %d took over", old, next)
	if err := c.Resume(old); err != nil {
		t.Fatal(err)
	}
	awaitMode(ctx, t, c, old, "follower")
}

// awaitMode waits until server i reports mode.
func awaitMode(ctx context.Context, t *testing.T, c *testenv.Cluster, i int, mode string) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := c.Mode(ctx, i)
		if err == nil && got == mode {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("server %d mode = %q, %v; want %q", i, got, err, mode)
		case <-tick.C:
		}
	}
}

func TestExpireConnThroughAnotherServerOfTheEnsemble(t *testing.T) {
	c := testenv.New(t, testenv.Options{Servers: 3})
	victim := connect(t, c.Addrs()[0], 2*time.Second)
	observer := connect(t, c.Addrs()[2], 2*time.Second)
	victim.mustCreate(t, "/expired", zk.FlagEphemeral)

	if err := testenv.ExpireConn(testContext(t), c.Addrs()[1:], victim.Conn); err != nil {
		t.Fatal(err)
	}
	observer.waitDeleted(t, "/expired")
	victim.waitState(t, zk.StateExpired)
}

func TestSilencedQuorumLinkStopsAFollowerHearingTheLeader(t *testing.T) {
	ctx := testContext(t)
	// A follower gives up a silent leader after syncLimit ticks: 5 s here,
	// longer than the test needs the silence.
	c := testenv.New(t, testenv.Options{Servers: 3, SyncLimit: 50, QuorumRelays: true})
	leader, err := c.QuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % 3
	atLeader := connect(t, c.Addrs()[leader], 4*time.Second)
	atFollower := connect(t, c.Addrs()[follower], 4*time.Second)
	atFollower.mustCreate(t, "/before", 0) // the follower's link works

	if err := c.SilenceQuorum(follower); err != nil {
		t.Fatal(err)
	}
	atLeader.mustCreate(t, "/silenced", 0) // committed by the other two
	time.Sleep(300 * time.Millisecond)     // ample for a proposal to reach a live follower
	if ok, _, err := atFollower.Exists("/silenced"); err != nil || ok {
		t.Fatalf("exists /silenced on the silenced follower = %v, %v; want false, nil (it still answers, from what it has)", ok, err)
	}
	if mode, err := c.Mode(ctx, follower); err != nil || mode != "follower" {
		t.Fatalf("silenced follower's mode = %q, %v; want follower", mode, err)
	}

	if err := c.HealQuorum(follower); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, _, err := atFollower.Exists("/silenced")
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the healed follower never saw /silenced (last: %v, %v)", ok, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestQuorumFaultsNeedQuorumRelays(t *testing.T) {
	if err := (testenv.Options{SyncLimit: -1}).Validate(); !errors.Is(err, testenv.ErrBadOptions) {
		t.Fatalf("Validate(SyncLimit: -1) = %v, want ErrBadOptions", err)
	}
	c := testenv.New(t, testenv.Options{})
	if err := c.SilenceQuorum(0); !errors.Is(err, testenv.ErrBadOptions) {
		t.Fatalf("SilenceQuorum without QuorumRelays = %v, want ErrBadOptions", err)
	}
}
