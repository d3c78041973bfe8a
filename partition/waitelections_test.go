package partition_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/operator"
)

// TestWaitDrainedFollowsTheElectionsNotTheRecord lays a root out by hand:
// member m, registered, whose record claims shard s and is never written
// again (as a record stayed wrong after a quorum leader's failover, its
// member leading nothing), and m's candidate first in s's election. A
// drain of m waits while m's candidate leads s, and returns once it is
// deleted, although the record still claims s. Before, WaitDrained (and
// so `zkelect shards drain --wait`) waited for the record, here forever.
func TestWaitDrainedFollowsTheElectionsNotTheRecord(t *testing.T) {
	root, sess := newRoot(t), connect(t, 5*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := partition.EnsureRoot(ctx, sess, root); err != nil {
		t.Fatal(err)
	}
	acl := zk.WorldACL(zk.PermAll)
	for _, id := range []string{"m", "n"} { // n: a live member to take the shards
		if _, err := sess.Create(ctx, root+"/members/"+id, nil, zk.FlagEphemeral, acl); err != nil {
			t.Fatal(err)
		}
	}
	rec := fmt.Appendf(nil, `{"session":%d,"leading":{"s":7}}`, sess.ID())
	if _, err := sess.Create(ctx, root+"/owners/m", rec, 0, acl); err != nil {
		t.Fatal(err)
	}
	election, err := partition.ElectionPath(ctx, sess, root, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, path.Dir(election), nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, election, nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	cand, err := sess.Create(ctx, election+"/n_", []byte("m"), zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		t.Fatal(err)
	}
	op, err := operator.New(sess, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Drain(ctx, "m", "test"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- op.WaitDrained(ctx, "m") }()
	select {
	case err := <-waited:
		t.Fatalf("WaitDrained returned (%v) while m's candidate leads s", err)
	case <-time.After(time.Second): // a return would come within a few round trips
	}
	if err := sess.Delete(ctx, cand, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("WaitDrained: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("WaitDrained did not return within 30s of m's candidate leaving s's election; m's record still claims s")
	}
}
