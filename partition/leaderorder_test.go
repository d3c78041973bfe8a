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
	"github.com/zkelect/zkelect/zxidfence"
)

// leaderSeen is one observer's report of a shard's leader.
type leaderSeen struct {
	member string
	token  zxidfence.Token
}

// TestObserversShowTheElectionsNotTheRecords lays a root out by hand: three
// registered members whose records claim shard s (a's with token 206,
// then b's with 249), and a record of x, who is no member, claiming s
// with the largest token: records forged or lagging, as a holder of the
// group's credentials or a member's slow publish leaves them. WatchCluster,
// WatchLeaders and ReadCluster must show s as its election holds it: no
// leader until a candidate znode is first in s's election, then that
// candidate's member and czxid, never a record's claim, and a token that
// never goes down. Before, all three showed the records' claims (x's
// forged one included): /v1/owners showed shards "led by" a non-member.
func TestObserversShowTheElectionsNotTheRecords(t *testing.T) {
	root, sess := newRoot(t), connect(t, 5*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := partition.EnsureRoot(ctx, sess, root); err != nil {
		t.Fatal(err)
	}
	acl := zk.WorldACL(zk.PermAll)
	write := func(id, leading string) {
		t.Helper()
		p, rec := root+"/owners/"+id, fmt.Appendf(nil, `{"session":%d,"leading":%s}`, sess.ID(), leading)
		if _, err := sess.Set(ctx, p, rec, -1); err != nil {
			t.Fatalf("write %s's record: %v", id, err)
		}
	}
	for _, id := range []string{"a", "b", "c", "x"} {
		if id != "x" {
			if _, err := sess.Create(ctx, root+"/members/"+id, nil, zk.FlagEphemeral, acl); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := sess.Create(ctx, root+"/owners/"+id, []byte(`{}`), 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	write("a", `{"s":206}`)
	write("x", `{"s":999999999}`)
	election, err := partition.ElectionPath(ctx, sess, root, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, path.Dir(election), nil, 0, acl); err != nil && !isExists(err) {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, election, nil, 0, acl); err != nil {
		t.Fatal(err)
	}

	cluster, leaders := make(chan leaderSeen, 64), make(chan leaderSeen, 64)
	done := make(chan error, 2)
	go func() {
		done <- partition.WatchCluster(ctx, sess, root, func(c partition.Cluster) {
			l := c.Leaders["s"]
			report(ctx, cluster, leaderSeen{l.Member, l.Token})
		})
	}()
	go func() {
		done <- partition.WatchLeaders(ctx, sess, root, func(shard, member string, token zxidfence.Token) {
			if shard == "s" {
				report(ctx, leaders, leaderSeen{member, token})
			}
		})
	}()
	defer func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("watch: %v", err)
			}
		}
	}()
	observers := map[string]chan leaderSeen{"WatchCluster": cluster, "WatchLeaders": leaders}
	highest := map[string]zxidfence.Token{}
	// await reads each observer's reports of s until one is want, failing on
	// a record's claim or a token below one it reported before.
	await := func(what string, want leaderSeen) {
		t.Helper()
		for name, ch := range observers {
			for seen := false; !seen; {
				select {
				case got := <-ch:
					if got.member == "a" || got.member == "x" || got.member != "" && got.token < highest[name] {
						t.Fatalf("%s: %s reported s led by %s with token %d (highest before %d)", what, name, got.member, got.token, highest[name])
					}
					highest[name] = max(highest[name], got.token)
					seen = got == want
				case <-time.After(20 * time.Second):
					t.Fatalf("%s: %s did not report s as %+v within 20s", what, name, want)
				}
			}
		}
		c, err := partition.ReadCluster(ctx, sess, root)
		if err != nil {
			t.Fatal(err)
		}
		if l := c.Leaders["s"]; (leaderSeen{l.Member, l.Token}) != want {
			t.Fatalf("%s: ReadCluster shows s led by %+v, want %+v", what, l, want)
		}
	}
	candidate := func(member string) (string, zxidfence.Token) {
		t.Helper()
		p, err := sess.Create(ctx, election+"/n_", []byte(member), zk.FlagEphemeral|zk.FlagSequence, acl)
		if err != nil {
			t.Fatal(err)
		}
		_, st, err := sess.Get(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return p, zxidfence.Token(st.Czxid)
	}
	// WatchCluster's first picture shows s without a leader, although a's
	// and x's records claim it (WatchLeaders reports changes only).
	select {
	case got := <-cluster:
		if got != (leaderSeen{}) {
			t.Fatalf("WatchCluster's first picture shows s led by %+v, from a record; its election is empty", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("WatchCluster reported nothing within 20s")
	}
	b, bToken := candidate("b")
	await("b's candidate first in s's election", leaderSeen{"b", bToken})
	write("b", `{"s":249}`)
	_, cToken := candidate("c") // behind b: no change
	write("x", `{"s":2000000000}`)
	if err := sess.Delete(ctx, b, -1); err != nil {
		t.Fatal(err)
	}
	await("b's candidate deleted, c's first", leaderSeen{"c", cToken})
}

// report hands a callback's report to the test, unless ctx ended (the
// test failed and stops the watches).
func report(ctx context.Context, ch chan<- leaderSeen, l leaderSeen) {
	select {
	case ch <- l:
	case <-ctx.Done():
	}
}

func isExists(err error) bool { return errors.Is(err, zk.ErrNodeExists) }
