package partition_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
	"github.com/zkelect/zkelect/testenv"
)

// TestRecordSettlesAfterDrainWhileQuorumLeaderDown drains a member that
// reaches the ensemble only through the quorum leader (its other links
// down), while that server is killed: the member's leaderships are
// suspended by the lost connection when it learns of the drain, on its
// reconnect once the server is back. Once ZooKeeper shows it leading nothing
// its record must say so too, within seconds of the server's return at
// the latest: a record that keeps claiming the shards it handed off (its
// pre-kill tokens, under its live session) is what every router and
// operator's drain --wait reads.
func TestRecordSettlesAfterDrainWhileQuorumLeaderDown(t *testing.T) {
	c := testenv.New(t, testenv.Options{Servers: 3, MaxSessionTimeout: 10 * time.Second})
	root, shards := newRoot(t), partition.Range(0, 48)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ql, err := c.QuorumLeader(ctx)
	if err != nil {
		t.Fatalf("find the quorum leader: %v", err)
	}
	ms := []*member{startMemberOn(t, connectTo(t, c.Addrs()[ql:ql+1], 10*time.Second), root, "m1", shards, newTracker())}
	for _, id := range []string{"m2", "m3"} {
		ms = append(ms, startMemberOn(t, connectTo(t, c.Addrs(), 6*time.Second), root, id, shards, newTracker()))
	}
	waitBalanced(t, shards, ms, 60*time.Second)
	waitSettled(t, shards, ms)
	op, err := operator.New(connectTo(t, c.Addrs(), 6*time.Second), root, nil)
	if err != nil {
		t.Fatalf("NewOperator: %v", err)
	}
	if err := c.Kill(ql); err != nil {
		t.Fatalf("kill the quorum leader (server %d): %v", ql, err)
	}
	if _, err := op.Drain(ctx, "m1", "test"); err != nil {
		t.Fatalf("Drain(m1) with the quorum leader down: %v", err)
	}
	if err := c.Restart(ctx, ql); err != nil {
		t.Fatalf("restart server %d: %v", ql, err)
	}
	waitFor(t, 30*time.Second, "ZooKeeper to show the drained m1 leading nothing", func() (bool, string) {
		n := ledBy(t, ms[1].sess, root, "m1")
		return n == 0, fmt.Sprintf("m1 leads %d shards", n)
	})
	waitFor(t, 15*time.Second, "m1's record to claim nothing after the quorum leader's return", func() (bool, string) {
		rec := readRecord(t, ms[1].sess, root, "m1")
		return rec.Session == ms[0].sess.ID() && len(rec.Leading) == 0,
			fmt.Sprintf("record of session 0x%x claims %d shards (m1's session 0x%x)", rec.Session, len(rec.Leading), ms[0].sess.ID())
	})
	if err := op.WaitDrained(ctx, "m1"); err != nil {
		t.Fatalf("WaitDrained(m1): %v", err)
	}
}
