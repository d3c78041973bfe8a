package partition_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestTwoGroupsShareAPrefix: two groups with different digest
// credentials run roots side by side under one missing prefix, /shared.
// The first group's member creates /shared; it must leave it a level
// others may create their roots in (world:anyone:cr), not give it its own
// ACL: the second group's member then failed with "not authenticated".
// Nobody may delete either root through the shared level, the groups
// included.
func TestTwoGroupsShareAPrefix(t *testing.T) {
	shared := newRoot(t) + "/shared"
	shards := partition.Range(0, 2)
	groups := []struct{ root, user, password string }{
		{shared + "/billing", "billing", "billing-secret"},
		{shared + "/search", "search", "search-secret"},
	}
	for _, g := range groups {
		sess := connectAs(t, recipe.WithDigestAuth(g.user, g.password))
		mb := newMember(t, sess, g.root, g.user, shards, newTracker(), withGroupACL)
		mb.run(t)
		waitFor(t, 30*time.Second, g.user+"'s member leading every shard of "+g.root, func() (bool, string) {
			select {
			case <-mb.ended:
				err := <-mb.done
				mb.done <- nil // stop's report: the error is reported here
				t.Fatalf("group %s's member on %s: Run: %v", g.user, g.root, err)
			default:
			}
			n := len(mb.m.Leaderships())
			return n == len(shards), fmt.Sprintf("leads %d of %d", n, len(shards))
		})
	}
	anon := connect(t, sessionTimeout)
	acl, _, err := anon.GetACL(context.Background(), shared)
	if err != nil {
		t.Fatal(err)
	}
	if got := recipe.FormatACL(acl); got != "world:anyone:cr" {
		t.Errorf("ACL of the shared level %s = %s; want world:anyone:cr", shared, got)
	}
	for _, g := range groups {
		if err := anon.Delete(context.Background(), g.root, -1); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("an anonymous client deleting the root %s: %v; want zk.ErrNoAuth", g.root, err)
		}
	}
}
