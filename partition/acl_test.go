package partition_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestRunUnderReadOnlyParentIsACLDenied: a root under a znode nobody may
// create children in fails at once with recipe.ErrACLDenied, as recipe's
// own refusals do; it once returned a bare "zk: not authenticated".
func TestRunUnderReadOnlyParentIsACLDenied(t *testing.T) {
	sess := connect(t, sessionTimeout)
	parent := newRoot(t)
	for _, p := range []string{"/partition-test", parent} {
		acl := zk.WorldACL(zk.PermAll)
		if p == parent {
			acl = zk.WorldACL(zk.PermRead)
		}
		if _, err := sess.Conn().Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	m, err := partition.NewManager(sess, parent+"/part", partition.Config{MemberID: "m", Shards: partition.Range(0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = m.Run(ctx)
	if !errors.Is(err, recipe.ErrACLDenied) || !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Run under a read-only parent = %v; want recipe.ErrACLDenied wrapping zk.ErrNoAuth", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Run returned only when its context ended: %v", err)
	}
}
