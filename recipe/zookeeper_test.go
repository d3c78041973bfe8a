package recipe_test

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
)

// TestSessionOperations runs each of the session's ZooKeeper calls against
// a real server, with go-zookeeper's results and errors.
func TestSessionOperations(t *testing.T) {
	s := session(t, zkc.ConnectString())
	ctx := t.Context()
	base := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	ensurePath(t, raw, base)
	p := base + "/n"
	if got, err := s.Create(ctx, p, []byte("a"), 0, zk.WorldACL(zk.PermAll)); err != nil || got != p {
		t.Fatalf("create: %q, %v", got, err)
	}
	if _, err := s.Create(ctx, p, nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create again: %v, want ErrNodeExists", err)
	}
	data, st, err := s.Get(ctx, p)
	if err != nil || string(data) != "a" || st.Version != 0 {
		t.Fatalf("get: %q, %+v, %v", data, st, err)
	}
	if st, err = s.Set(ctx, p, []byte("b"), 0); err != nil || st.Version != 1 {
		t.Fatalf("set: %+v, %v", st, err)
	}
	if _, err := s.Set(ctx, p, []byte("c"), 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("set at an old version: %v, want ErrBadVersion", err)
	}
	res, err := s.Multi(ctx, &zk.CheckVersionRequest{Path: p, Version: 7},
		&zk.SetDataRequest{Path: p, Data: []byte("d"), Version: -1})
	if !errors.Is(err, zk.ErrBadVersion) || len(res) != 2 || !errors.Is(res[0].Error, zk.ErrBadVersion) {
		t.Fatalf("multi with a failing check: %+v, %v; want ErrBadVersion for the check", res, err)
	}
	res, err = s.Multi(ctx, &zk.CheckVersionRequest{Path: p, Version: 1},
		&zk.SetDataRequest{Path: p, Data: []byte("d"), Version: -1},
		&zk.CreateRequest{Path: p + "2", Acl: zk.WorldACL(zk.PermAll)})
	if err != nil || len(res) != 3 || res[1].Stat == nil || res[1].Stat.Version != 2 || res[2].String != p+"2" {
		t.Fatalf("multi: %+v, %v", res, err)
	}
	if err := s.Sync(ctx, p); err != nil {
		t.Fatalf("sync: %v", err)
	}
	names, _, err := s.Children(ctx, base)
	if err != nil || len(names) != 2 {
		t.Fatalf("children: %v, %v", names, err)
	}
	for _, q := range []string{p, p + "2"} {
		if err := s.Delete(ctx, q, -1); err != nil {
			t.Fatalf("delete %s: %v", q, err)
		}
	}
	if ok, st, err := s.Exists(ctx, p); ok || st != nil || err != nil {
		t.Fatalf("exists after delete: %v, %+v, %v", ok, st, err)
	}
	if _, _, err := s.Get(ctx, p); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("get after delete: %v, want ErrNoNode", err)
	}
	if _, _, err := s.Get(ctx, "relative"); !errors.Is(err, recipe.ErrInvalidPath) {
		t.Fatalf("get of a relative path: %v, want ErrInvalidPath", err)
	}
	// The reserved tree is readable: the election path rule is not the
	// session's.
	if _, _, ch, err := s.GetW(ctx, "/zookeeper/config"); err != nil || ch == nil {
		t.Fatalf("GetW /zookeeper/config: %v", err)
	}
}
