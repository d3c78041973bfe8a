package testenv_test

import (
	"testing"
	"time"

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
