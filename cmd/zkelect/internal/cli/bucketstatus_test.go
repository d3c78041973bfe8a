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
// (from one listing per bucket) and exits 0.
func TestStatusOfABucketedRoot(t *testing.T) {
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprintf("tenant-eu-west-1-shard-%09d", i)
	}
	list := []string{"--shards", strings.Join(ids, ",")}
	root, s := testPath(t), testSession(t)
	// A bucketed root whose <root>/shards is open (a build before it was
	// made READ only, or opened by a super user), so that the stray
	// election below can be made.
	for _, p := range []string{"/cmdtest", root, root + "/shards"} {
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	if _, err := s.Conn().Create(root+"/buckets", []byte(`{"layout":"buckets","buckets":1024}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
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

	// An older release campaigning on this root would make <root>/shards/<id>.
	stray := root + "/shards/" + ids[7]
	if _, err := s.Conn().Create(stray, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p = startProc(t, "status", []string{"status", "--zk", zkc.ConnectString(), "--root", root})
	if code := p.wait(20 * time.Second); code != statusUnled || !strings.Contains(p.err.String(), "1 shards of "+root+" have an election outside its buckets") ||
		!strings.Contains(p.out.String(), "stray election "+stray) {
		t.Errorf("status with a stray election exited %d:\n%s%s\nwant %d naming it", code, p.out.String(), p.err.String(), statusUnled)
	}
}
