package partition_test

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// ephemeralsBySession returns ZooKeeper's own account of the ephemeral
// znodes under root (server i's dump: the standalone server or the quorum
// leader): session id to the paths it owns.
func ephemeralsBySession(t testing.TB, c *testenv.Cluster, i int, root string) map[int64][]string {
	t.Helper()
	all, err := c.Ephemerals(t.Context(), i)
	if err != nil {
		t.Fatalf("ephemerals of server %d: %v", i, err)
	}
	owned := map[int64][]string{}
	for id, ps := range all {
		for _, p := range ps {
			if strings.HasPrefix(p, root+"/") {
				owned[id] = append(owned[id], p)
			}
		}
	}
	return owned
}

// shardOf returns the shard id of a candidate znode path
// <root>/buckets/<bucket>/<id>/<name> (or <root>/shards/<id>/<name> in a
// flat root), or "" for another path.
func shardOf(root, p string) string {
	dir := path.Dir(p)
	if path.Dir(dir) != path.Join(root, "shards") && path.Dir(path.Dir(dir)) != path.Join(root, "buckets") {
		return ""
	}
	return path.Base(dir)
}

// TestMemberAboveTheCapSpreadsItsElectionsOverSessions: a member running
// 40 elections with MaxShardsPerSession 10 owns its 41 ephemerals (the
// member znode too) on 5 sessions of at most 10 each, as ZooKeeper itself
// reports them, and reports the same sessions.
func TestMemberAboveTheCapSpreadsItsElectionsOverSessions(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 40)
	reg := prometheus.NewRegistry()
	capTen := func(c *partition.Config) { c.MaxShardsPerSession, c.Metrics = 10, reg }
	a := startMember(t, root, "a", shards, tr, capTen)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)

	var owned map[int64][]string
	waitFor(t, 10*time.Second, "ZooKeeper to list 41 ephemerals of a under the root", func() (bool, string) {
		owned = ephemeralsBySession(t, zkc, 0, root)
		n := 0
		for _, ps := range owned {
			n += len(ps)
		}
		return n == 41, fmt.Sprintf("%d ephemerals on %d sessions", n, len(owned))
	})
	if len(owned) != 5 {
		t.Errorf("a's ephemerals are on %d sessions, want 5 (41 at most 10 a session)", len(owned))
	}
	for id, ps := range owned {
		if len(ps) > 10 {
			t.Errorf("session 0x%x owns %d ephemerals, over MaxShardsPerSession 10", id, len(ps))
		}
	}
	loads := a.m.Sessions()
	if n := gatherOne(t, reg, "zkelect_partition_sessions").GetGauge().GetValue(); int(n) != len(loads) {
		t.Errorf("zkelect_partition_sessions is %v; Sessions() lists %d", n, len(loads))
	}
	if loads[0].SessionID != a.sess.ID() {
		t.Errorf("Sessions()[0] is session 0x%x, want the member's own 0x%x", loads[0].SessionID, a.sess.ID())
	}
	for _, l := range loads {
		if l.Ephemerals != len(owned[l.SessionID]) {
			t.Errorf("Sessions() says session 0x%x carries %d ephemerals; ZooKeeper lists %d", l.SessionID, l.Ephemerals, len(owned[l.SessionID]))
		}
	}
	tr.check(t, false)
}

// TestExpiringOneOfAMembersSessionsLeavesTheOthersAlone: member a spreads
// its shards over three sessions; one of its sibling sessions expires. Only
// the shards whose znodes that session owned lose their leader; a leads
// them again (on the session's replacement) while every other leadership,
// a's and b's, keeps its token, and a's registration and record stay
// those of its own session.
func TestExpiringOneOfAMembersSessionsLeavesTheOthersAlone(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 40)
	capEight := func(c *partition.Config) { c.MaxShardsPerSession = 8 }
	a := startMember(t, root, "a", shards, tr, capEight)
	b := startMember(t, root, "b", shards, tr, capEight)
	ms := []*member{a, b}
	waitBalanced(t, shards, ms, 20*time.Second)
	before := map[string]zxidfence.Token{}
	maps.Copy(before, a.m.Leaderships())
	maps.Copy(before, b.m.Leaderships())

	sib := partition.SessionOf(a.m, 1)
	if sib == nil {
		t.Fatalf("a leads %d shards with MaxShardsPerSession 8 on one session", len(a.m.Leaderships()))
	}
	lost := map[string]bool{}
	for _, p := range ephemeralsBySession(t, zkc, 0, root)[sib.ID()] {
		if s := shardOf(root, p); s != "" {
			lost[s] = true
		}
	}
	if len(lost) == 0 {
		t.Fatalf("a's second session 0x%x owns no election znode", sib.ID())
	}
	if err := testenv.ExpireConn(t.Context(), zkc.Addrs(), sib.Conn()); err != nil {
		t.Fatalf("expire a's second session: %v", err)
	}
	waitFor(t, 20*time.Second, "a to lead the expired session's shards again with new tokens", func() (bool, string) {
		now := a.m.Leaderships()
		for s := range lost {
			if now[s] <= before[s] {
				return false, fmt.Sprintf("shard %s: token %v, before expiry %v", s, now[s], before[s])
			}
		}
		return true, ""
	})
	after, _ := waitBalanced(t, shards, ms, 20*time.Second)
	for _, mb := range ms {
		for s, tok := range mb.m.Leaderships() {
			if !lost[s] && tok != before[s] {
				t.Errorf("shard %s (not on the expired session) is led by %s with token %v, before %v", s, after[s], tok, before[s])
			}
		}
	}
	live, err := partition.LiveMembers(t.Context(), b.sess, root)
	if err != nil || live["a"] != a.sess.ID() {
		t.Errorf("a registered by session 0x%x (err %v), want its own 0x%x", live["a"], err, a.sess.ID())
	}
	waitFor(t, 10*time.Second, "a's record to be its own session's", func() (bool, string) {
		rec := readRecord(t, b.sess, root, "a")
		return rec.Session == a.sess.ID() && len(rec.Leading) == len(a.m.Leaderships()),
			fmt.Sprintf("record of session 0x%x with %d shards", rec.Session, len(rec.Leading))
	})
	tr.check(t, false)
}

// TestServersLoadTheirDatabaseAfterAMembersSessionExpiry runs a member with
// 800 shards on a 3-server ensemble whose jute.maxbuffer is 32 KiB: one
// session owning them all writes a closeSession transaction of 115 KB, more
// than the servers read back (twice jute.maxbuffer): without the bound the
// restarted servers fail with "Unable to load database on disk ...
// Unreasonable length = 115224". Spread over
// sessions within JuteMaxBuffer, the member's own session expires, then
// every server is killed and restarted: each loads its database and serves,
// the expired session's znodes are gone, and every shard is led again.
func TestServersLoadTheirDatabaseAfterAMembersSessionExpiry(t *testing.T) {
	const jute = 32 << 10
	c := testenv.New(t, testenv.Options{Servers: 3, JuteMaxBuffer: jute})
	root, shards := newRoot(t), partition.Range(0, 800)
	createShardParents(t, c, root, shards) // one by one: Run's multis of 500 creates exceed 32 KiB
	tr := newTracker()
	a := startMemberOn(t, connectTo(t, c.Addrs(), 4*time.Second), root, "a", shards, tr,
		func(cfg *partition.Config) { cfg.JuteMaxBuffer = jute })
	waitBalanced(t, shards, []*member{a}, 40*time.Second)
	for _, l := range a.m.Sessions() {
		if l.CloseSessionBytes > jute {
			t.Fatalf("session 0x%x would write a closeSession of %d bytes, over %d", l.SessionID, l.CloseSessionBytes, jute)
		}
	}
	old := a.sess.ID()
	if err := testenv.ExpireConn(t.Context(), c.Addrs(), a.sess.Conn()); err != nil {
		t.Fatalf("expire a's session: %v", err)
	}
	waitFor(t, 30*time.Second, "a to register again on a new session", func() (bool, string) {
		id := a.sess.ID()
		return id != 0 && id != old, fmt.Sprintf("session 0x%x", id)
	})
	for i := range c.Size() {
		if err := c.Kill(i); err != nil {
			t.Fatalf("kill server %d: %v", i, err)
		}
	}
	restartAll(t, c)
	leader, err := c.QuorumLeader(t.Context())
	if err != nil {
		t.Fatalf("no quorum leader after the restart: %v", err)
	}
	if ps := ephemeralsBySession(t, c, leader, root)[old]; len(ps) > 0 {
		t.Errorf("the expired session 0x%x still owns %d znodes after the restart", old, len(ps))
	}
	waitFor(t, 40*time.Second, "a to lead every shard again", func() (bool, string) {
		n := len(a.m.Leaderships())
		return n == len(shards), fmt.Sprintf("a leads %d of %d", n, len(shards))
	})
	tr.check(t, false)
}

// restartAll starts every (killed) server of c at once (an ensemble serves
// only with a quorum) and waits until each has loaded its database and
// serves.
func restartAll(t *testing.T, c *testenv.Cluster) {
	t.Helper()
	errs := make(chan error, c.Size())
	for i := range c.Size() {
		go func() { errs <- c.Restart(t.Context(), i) }()
	}
	for range c.Size() {
		if err := <-errs; err != nil {
			t.Errorf("a server did not load its database and serve again: %v", err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// createShardParents creates root's znodes and its shards' election znodes
// one request each.
func createShardParents(t *testing.T, c *testenv.Cluster, root string, shards []string) {
	t.Helper()
	sess := connectTo(t, c.Addrs(), 4*time.Second)
	conn := sess.Conn()
	paths := []string{}
	for p := root; p != "/"; p = path.Dir(p) {
		paths = append(paths, p)
	}
	slices.Reverse(paths)
	for _, dir := range []string{"members", "owners", "shards"} {
		paths = append(paths, path.Join(root, dir))
	}
	for _, s := range shards {
		paths = append(paths, path.Join(root, "shards", s))
	}
	createPersistent(t, conn, nil, paths...)
}

// TestCrashedMemberWithSeveralSessionsFailsOver: member c spreads its
// shards over several sessions and is cut off (a crash as ZooKeeper sees
// it): every one of its sessions expires, and the other members lead all
// of its shards, balanced, without two leaders at once.
func TestCrashedMemberWithSeveralSessionsFailsOver(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 45)
	capEight := func(c *partition.Config) { c.MaxShardsPerSession = 8 }
	a := startMember(t, root, "a", shards, tr, capEight)
	b := startMember(t, root, "b", shards, tr, capEight)
	proxy := zkc.NewProxyT(t)
	c := startMemberOn(t, connectTo(t, proxy.Addrs(), sessionTimeout), root, "c", shards, tr, capEight)
	waitBalanced(t, shards, []*member{a, b, c}, 20*time.Second)
	if n := len(c.m.Sessions()); n < 2 {
		t.Fatalf("c leads %d shards on %d session(s) with MaxShardsPerSession 8", len(c.m.Leaderships()), n)
	}
	proxy.Blackhole()
	_, took := waitBalanced(t, shards, []*member{a, b}, 30*time.Second)
	t.Logf("c's shards led again by a and b in %v", took)
	proxy.Heal()
	tr.check(t, false)
}
