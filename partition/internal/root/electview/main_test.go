package electview

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

var zkc *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
}

// connectTo opens a session on addrs, closed at the end of the test.
func connectTo(t *testing.T, addrs []string, timeout time.Duration) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s, err := recipe.Connect(ctx, addrs, recipe.WithSessionTimeout(timeout))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testRoot is a flat root of its own for the test.
func testRoot(t *testing.T) string {
	return "/electview/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + time.Now().Format("150405.000000")
}

// campaign creates member's candidate in shard's election of a flat root
// (an ephemeral sequential znode holding the member id, as recipe's
// candidates do) and returns its path.
func campaign(t *testing.T, s *recipe.Session, root, shard, member string) string {
	t.Helper()
	acl := zk.WorldACL(zk.PermAll)
	el := root + "/shards/" + shard
	for _, p := range []string{"/electview", root, root + "/shards", el} {
		if _, err := s.Create(t.Context(), p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	p, err := s.Create(t.Context(), el+"/_c_"+member+"-", []byte(member), zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		t.Fatalf("campaign for %s in %s: %v", member, el, err)
	}
	return p
}
