package partition_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zxidfence"
)

// leaderSeen is one report of shard s's leader by an observer.
type leaderSeen struct {
	member string
	token  zxidfence.Token
}

// TestObserversNeverReportAnOlderToken lays a root out as members leave
// it (registrations and records, no member running) and writes the
// records in the order an observer may read them after shard s moved
// from a (token 206) to b (249) and on to c (300): b's record claims s,
// then drops it, while a's record still claims s with 206 (a's record
// lags its resignation: its member's publish gap, or its watch read late).
// WatchCluster and WatchLeaders, followed side by side, must never report
// s's token going down: after b's 249 they report s without a leader, not
// a with 206, until c's 300. Before, both reported a with 206: the daemon's
// /v1/watch stream then sent "token 206 after 249".
func TestObserversNeverReportAnOlderToken(t *testing.T) {
	root, sess := newRoot(t), connect(t, 5*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := partition.EnsureRoot(ctx, sess, root); err != nil {
		t.Fatal(err)
	}
	write := func(id, leading string) {
		t.Helper()
		p, rec := root+"/owners/"+id, fmt.Appendf(nil, `{"session":%d,"leading":%s}`, sess.ID(), leading)
		if _, err := sess.Set(ctx, p, rec, -1); err != nil {
			t.Fatalf("write %s's record: %v", id, err)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := sess.Create(ctx, root+"/members/"+id, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Create(ctx, root+"/owners/"+id, []byte(`{}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	write("a", `{"s":206}`)

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
	// a token below one it reported before.
	await := func(what string, want leaderSeen) {
		t.Helper()
		for name, ch := range observers {
			for seen := false; !seen; {
				select {
				case got := <-ch:
					if got.member != "" && got.token < highest[name] {
						t.Fatalf("%s, %s reported s led by %s with token %d after %d", what, name, got.member, got.token, highest[name])
					}
					highest[name] = max(highest[name], got.token)
					seen = got == want
				case <-time.After(20 * time.Second):
					t.Fatalf("%s: %s did not report s as %+v within 20s", what, name, want)
				}
			}
		}
	}
	await("a leading", leaderSeen{"a", 206})
	write("b", `{"s":249}`)
	await("b's record claiming s while a's lags", leaderSeen{"b", 249})
	write("b", `{}`)
	await("b's record dropping s while a's lags", leaderSeen{})
	write("c", `{"s":300}`)
	await("c leading", leaderSeen{"c", 300})
}

// report hands a callback's report to the test, unless ctx ended (the
// test failed and stops the watches).
func report(ctx context.Context, ch chan<- leaderSeen, l leaderSeen) {
	select {
	case ch <- l:
	case <-ctx.Done():
	}
}
