package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestStatusOfABucketedRoot: two shards daemons of this release on a new
// root lead 200 shards of 32-byte ids in buckets (<root>/buckets/<bucket>/
// <id>); zkelect status lists every shard with its leader and election
// (from one listing per bucket) and exits 0; the root's <root>/shards,
// where an older release would campaign, refuses creates.
func TestStatusOfABucketedRoot(t *testing.T) {
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprintf("tenant-eu-west-1-shard-%09d", i)
	}
	list := []string{"--shards", strings.Join(ids, ",")}
	root, s := testPath(t), testSession(t)
	startDaemonWith(t, root, "m1", 1, list)
	startDaemonWith(t, root, "m2", 1, list)
	eventually(t, 30*time.Second, "200 shards led, 100 by each daemon", func() bool {
		return balanced(owners(t, s, root), len(ids), "m1", "m2")
	})
	p := startProc(t, "status", []string{"status", "--zk", zkc.ConnectString(), "--root", root, "--output", "json"})
	if code := p.wait(20 * time.Second); code != 0 {
		t.Fatalf("status exited %d: %s", code, p.err.String())
	}
	var st struct {
		Shards []struct {
			Shard, Leader string
		} `json:"shards"`
	}
	if err := json.Unmarshal([]byte(p.out.String()), &st); err != nil {
		t.Fatalf("status output: %v\n%s", err, p.out.String())
	}
	if len(st.Shards) != len(ids) {
		t.Fatalf("status lists %d shards, want %d", len(st.Shards), len(ids))
	}
	o := owners(t, s, root)
	for _, sh := range st.Shards {
		if sh.Leader != o[sh.Shard].Member || path.Dir(path.Dir(o[sh.Shard].Election)) != root+"/buckets" {
			t.Errorf("shard %s: status says %q, Owners %+v; want the same leader, an election in a bucket", sh.Shard, sh.Leader, o[sh.Shard])
		}
	}

	// An older release campaigning on this root would make <root>/shards/<id>:
	// the root refuses it.
	if _, err := s.Conn().Create(root+"/shards/"+ids[7], nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("creating an election under a bucketed root's <root>/shards: %v, want zk.ErrNoAuth (READ only)", err)
	}
}

// TestStatusNamesAStrayElection: a bucketed root whose <root>/shards was
// open (a build before it was made READ only, or opened by a super user)
// holds an election an older release made there: zkelect status names it
// and exits 3, while a daemon of this release (which locks <root>/shards
// as it starts) leads every shard in the buckets.
func TestStatusNamesAStrayElection(t *testing.T) {
	root, s := testPath(t), testSession(t)
	stray := root + "/shards/1"
	for _, p := range []string{"/cmdtest", root, root + "/shards", stray} {
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	if _, err := s.Conn().Create(root+"/buckets", []byte(`{"layout":"buckets","buckets":1024}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	startDaemonWith(t, root, "m1", 4, nil)
	eventually(t, 30*time.Second, "4 shards led by m1", func() bool { return balanced(owners(t, s, root), 4, "m1") })
	p := startProc(t, "status", []string{"status", "--zk", zkc.ConnectString(), "--root", root})
	if code := p.wait(20 * time.Second); code != statusUnled || !strings.Contains(p.err.String(), "1 shards of "+root+" have an election outside its buckets") ||
		!strings.Contains(p.out.String(), "stray election "+stray) {
		t.Errorf("status with a stray election exited %d:\n%s%s\nwant %d naming it", code, p.out.String(), p.err.String(), statusUnled)
	}
}
