package recipe_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
)

// TestLeaderRefusedItsListingEndsItsLeadership: a leader that ZooKeeper
// refuses to let re-read its election after a reconnect (its ACL changed
// to exclude it) leaves the election, which deletes its znode: its
// leadership ends first, with ErrResigned wrapping ErrACLDenied, instead
// of being held on a znode that is gone.
func TestLeaderRefusedItsListingEndsItsLeadership(t *testing.T) {
	path := electionPath(t)
	p := zkc.NewProxyT(t)
	// Tolerating the reconnect's blip, the leadership lives on into the
	// re-listing.
	c := candidate(t, session(t, p.ConnectString()), path,
		recipe.WithConnectionLossPolicy(recipe.TolerateSuspend(200*time.Millisecond)))
	l := lead(t, c)
	admin := session(t, zkc.ConnectString(), recipe.WithDigestAuth("admin", "secret"))
	if _, err := admin.Conn().SetACL(path, zk.DigestACL(zk.PermAll, "admin", "secret"), -1); err != nil {
		t.Fatal(err)
	}
	defer func() { // let the candidate's delete through, so nothing is left
		if _, err := admin.Conn().SetACL(path, zk.WorldACL(zk.PermAll), -1); err != nil {
			t.Error(err)
		}
	}()
	p.Cut() // the reconnect makes the leader list the election again: refused
	err := awaitEnd(t, l, "the leadership to end once its candidate is refused the listing")
	if !errors.Is(err, recipe.ErrResigned) || !errors.Is(err, recipe.ErrACLDenied) {
		t.Fatalf("leadership ended with %v; want ErrResigned wrapping ErrACLDenied", err)
	}
	if c.IsLeader() {
		t.Fatal("the candidate still reports leading after leaving the election")
	}
}
