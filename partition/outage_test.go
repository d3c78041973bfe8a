package partition_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
)

// An outage longer than twice the session timeout (every handshake refused
// meanwhile) used to make the session ask for a new ZooKeeper session,
// while the restarted servers restored the old one: the member's znode was
// then owned by the process's own earlier, still live, session, and Run
// returned ErrDuplicateMember. The member must come back registered under
// its session and lead its shards again, whatever the outage.

func TestServerOutagesDoNotMakeTheMemberADuplicate(t *testing.T) {
	c := testenv.New(t, testenv.Options{Servers: 1})
	p := c.NewProxyT(t) // a proxy in front of a dead server refuses handshakes
	outages := []time.Duration{2500 * time.Millisecond, 4500 * time.Millisecond, 7 * time.Second}
	survivesOutages(t, c, p.Addrs(), []int{0}, outages)
}

func TestQuorumLossDoesNotMakeTheMemberADuplicate(t *testing.T) {
	c := testenv.New(t, testenv.Options{Servers: 3})
	p := c.NewProxyT(t)
	survivesOutages(t, c, p.Addrs(), []int{1, 2}, []time.Duration{3 * time.Second})
}

// survivesOutages runs a member on addrs (1s session) and, for each outage,
// kills the servers down, waits the outage and restarts them: each time
// the member must be registered again under its current session and lead
// every shard, and Run must not return.
func survivesOutages(t *testing.T, c *testenv.Cluster, addrs []string, down []int, outages []time.Duration) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 4)
	sess := connectTo(t, addrs, sessionTimeout)
	mb := startMemberOn(t, sess, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{mb}, 20*time.Second)
	for n, outage := range outages {
		for _, i := range down {
			if err := c.Kill(i); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(outage) // the fault itself
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		for _, i := range down {
			if err := c.Restart(ctx, i); err != nil {
				cancel()
				t.Fatal(err)
			}
		}
		cancel()
		waitFor(t, 30*time.Second, "the member registered again under its session and leading every shard", func() (bool, string) {
			select {
			case <-mb.ended:
				return true, ""
			default:
			}
			owner := memberOwner(t, sess.Conn(), root+"/members/a")
			return owner == sess.ID() && len(mb.m.Leaderships()) == len(shards),
				fmt.Sprintf("member znode owned by 0x%x, session 0x%x, %d shards led", owner, sess.ID(), len(mb.m.Leaderships()))
		})
		select {
		case <-mb.ended:
			err := <-mb.done
			mb.done <- err // for the cleanup's stop
			t.Fatalf("outage %d (%v): Run returned: %v", n, outage, err)
		default:
		}
		t.Logf("outage %d (%v): member registered under session 0x%x, leading %d shards", n, outage, sess.ID(), len(shards))
	}
	tr.check(t, false)
}

// memberOwner returns the session owning the member znode at p, 0 when it
// is missing or unreadable now.
func memberOwner(t *testing.T, conn *zk.Conn, p string) int64 {
	t.Helper()
	ok, st, err := conn.Exists(p)
	if err != nil || !ok {
		return 0
	}
	return st.EphemeralOwner
}
