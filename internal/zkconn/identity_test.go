package zkconn

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/testenv"
)

// deadAddr returns a loopback address nothing listens on (a server that
// is down: connections are refused).
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// markZnode creates a persistent znode on c's ensemble (a mark, as an
// election's path is) and deletes it at the test's end.
func markZnode(t *testing.T, c *Conn) string {
	t.Helper()
	path := fmt.Sprintf("/ident-%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	if _, _, err := c.Create2(t.Context(), path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Delete(ctx, path, -1)
	})
	return path
}

// expireDuringCut expires c's session on the ensemble while p holds every
// connection of c (a partition), then heals p.
func expireDuringCut(t *testing.T, c *Conn, p *testenv.Proxy) int64 {
	t.Helper()
	id, password := c.Credentials()
	p.Blackhole()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := testenv.ExpireSession(ctx, zkc.Addrs(), id, password); err != nil {
		t.Fatalf("expire session %#x: %v", id, err)
	}
	p.Heal()
	return id
}

// awaitNewSession waits (a generous bound) until c has a session other
// than old, after an Expired event for it.
func awaitNewSession(t *testing.T, c *Conn, k *eventSink, old int64, log *logBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := k.awaitSession(ctx, Expired); err != nil {
		t.Fatalf("no expiry of session %#x seen after the cut: %v\nlog:\n%s", old, err, log.String())
	}
	if err := k.awaitSession(ctx, Connected); err != nil {
		t.Fatalf("no new session after the expiry of %#x: %v\nlog:\n%s", old, err, log.String())
	}
	if id := c.ID(); id == old || id == 0 {
		t.Fatalf("session after the expiry: %#x, want a new one (old %#x)", id, old)
	}
	t.Logf("new session %#x %v after the cut healed", c.ID(), time.Since(start).Round(time.Millisecond))
}

// TestExpiryFromTheOnlyServerReachableIsBelieved: two servers listed, one
// of them down (a connect string not updated after a server was
// replaced); the session expires on the ensemble during a cut. The one
// server reached answers "expired", its data holds the znode this
// process saw, so the expiry is believed and a new session is made at
// once. Before, an expiry needed a majority of the entries (2 of 2): the
// client presented the dead session forever.
func TestExpiryFromTheOnlyServerReachableIsBelieved(t *testing.T) {
	p := proxyAt(t, "127.0.0.1:0")
	var log logBuffer
	c := dialT(t, []string{p.Addrs()[0], deadAddr(t)}, Config{Timeout: 4 * time.Second, Log: zerolog.New(&log),
		Auth: []Credential{{Scheme: "digest", Auth: "ident:secret"}}}) // replayed by the identity checks too
	markZnode(t, c)
	k := newEventSink()
	c.Subscribe(k)
	old := expireDuringCut(t, c, p)
	awaitNewSession(t, c, k, old, &log)
}

// TestPlainExpiryLogsNoForeignEnsemble: a plain expiry (the client cut
// off past its session timeout, as a SIGSTOP of the process does) with
// three entries is believed from the first server that says so, with no
// warning of another ensemble. Before, the first answer of three was
// logged as "expiry not believed from this server alone ... (another
// ensemble at a reused address?)".
func TestPlainExpiryLogsNoForeignEnsemble(t *testing.T) {
	addr := zkc.Addrs()[0]
	p, err := testenv.ListenProxy([]string{addr, addr, addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	var log logBuffer
	c := dialT(t, p.Addrs(), Config{Timeout: 4 * time.Second, Log: zerolog.New(&log).Level(zerolog.InfoLevel)})
	markZnode(t, c)
	k := newEventSink()
	c.Subscribe(k)
	old := expireDuringCut(t, c, p)
	awaitNewSession(t, c, k, old, &log)
	l := log.String()
	for _, bad := range []string{"another ensemble", "not believed"} {
		if strings.Contains(l, bad) {
			t.Errorf("log after a plain expiry says %q:\n%s", bad, l)
		}
	}
	if !strings.Contains(l, "says the session expired") {
		t.Errorf("no line saying which server of the ensemble said the session expired:\n%s", l)
	}
}

// TestMarksKeepTheLatestPersistentZnodes: only persistent znodes created
// by a transaction are marks; a path read again moves to the front with
// its latest czxid; at most maxLatest latest and maxStable oldest are
// kept, each listed once, the latest first.
func TestMarksKeepTheLatestPersistentZnodes(t *testing.T) {
	var m ensembleMarks
	m.saw("/eph", &zk.Stat{Czxid: 5, EphemeralOwner: 9})
	m.saw("/", &zk.Stat{})
	m.saw("/nil", nil)
	if m.held() {
		t.Fatalf("marks %v from an ephemeral, the root and no Stat", m.list())
	}
	for i := range maxMarks + 2 {
		m.saw(fmt.Sprintf("/p%d", i), &zk.Stat{Czxid: int64(10 + i), Ctime: 1})
	}
	if got := m.list(); len(got) != maxMarks || got[0].path != "/p9" || got[len(got)-1].path != "/p3" {
		t.Fatalf("marks %v; want %d, /p9 first, /p3 (the 4th oldest) last", got, maxMarks)
	}
	m.saw("/p3", &zk.Stat{Czxid: 99, Ctime: 2}) // deleted and created again
	got := m.list()
	if len(got) != maxMarks-1 || got[0] != (mark{"/p3", 99, 2}) || got[len(got)-1].path != "/p2" {
		t.Fatalf("marks %v; want %d, /p3 (czxid 99) first, /p2 last", got, maxMarks-1)
	}
	m.gone("/p3")
	if got := m.list(); len(got) != maxMarks-2 || slices.ContainsFunc(got, func(k mark) bool { return k.path == "/p3" }) {
		t.Fatalf("marks %v after /p3 was deleted", got)
	}
	m.reset()
	if m.held() {
		t.Fatal("marks after reset")
	}
}

// TestMarksPreferTheOldestZnodes: a partition manager reads its root and
// members directory once, then many shard elections, later deleted (the
// shards removed and pruned). The root and the members directory are
// still marks: a server of the ensemble can prove itself. Before, only the
// 8 latest were kept, every one an election, and none was left.
func TestMarksPreferTheOldestZnodes(t *testing.T) {
	var m ensembleMarks
	m.saw("/app", &zk.Stat{Czxid: 5, Ctime: 1})
	m.saw("/app/members", &zk.Stat{Czxid: 6, Ctime: 1})
	for i := range 100 {
		m.saw(fmt.Sprintf("/app/shards/s%d", i), &zk.Stat{Czxid: int64(100 + i), Ctime: 2})
	}
	for i := range 100 {
		m.gone(fmt.Sprintf("/app/shards/s%d", i))
	}
	got := m.list()
	want := []mark{{"/app", 5, 1}, {"/app/members", 6, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("marks %v after the elections were deleted; want the root and the members directory %v", got, want)
	}
}

// TestForeignServerGrantingTheNextSessionIsRefused: two servers listed,
// one of the session's ensemble, one of another ensemble ahead in zxids
// (an address reused since the session began). The session expires
// during a cut; after it the other ensemble's server says "expired" too,
// and, asked next for a new session, grants one. Neither is taken: the
// expiry is believed from the session's own server only, and the new
// session is the one its server's data proves, so the znode this process
// saw is there. Before, two "expired" of two entries were a majority, and
// the next session was made on whichever server came next, here the
// other ensemble's.
func TestForeignServerGrantingTheNextSessionIsRefused(t *testing.T) {
	own := testenv.New(t, testenv.Options{Servers: 1, MaxSessionTimeout: 20 * time.Second})
	other := testenv.New(t, testenv.Options{Servers: 1, MaxSessionTimeout: 20 * time.Second})
	filler := dialT(t, other.Addrs(), Config{Timeout: 4 * time.Second, Log: zerolog.Nop()})
	for i := range 100 { // the other ensemble is ahead in zxids: it says "expired" and grants sessions
		if _, err := filler.Create(t.Context(), fmt.Sprintf("/filler-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := testenv.ListenProxy([]string{own.Addrs()[0], other.Addrs()[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Retarget(1, deadAddr(t)); err != nil { // down at Dial: the session is made through the first
		t.Fatal(err)
	}
	var log logBuffer
	c := dialT(t, p.Addrs(), Config{Timeout: 4 * time.Second, Log: zerolog.New(&log)})
	mark := markZnode(t, c)
	k := newEventSink()
	c.Subscribe(k)
	if err := p.Retarget(1, other.Addrs()[0]); err != nil { // the address now serves another ensemble: dialled first after a cut
		t.Fatal(err)
	}
	id, password := c.Credentials()
	p.Blackhole()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := testenv.ExpireSession(ctx, own.Addrs(), id, password); err != nil {
		t.Fatalf("expire session %#x: %v", id, err)
	}
	p.Heal()
	awaitNewSession(t, c, k, id, &log)
	if ok, _, err := c.Exists(ctx, mark); err != nil || !ok {
		t.Fatalf("the new session %#x does not see %s (exists %v, %v): it is on another ensemble\nlog:\n%s", c.ID(), mark, ok, err, log.String())
	}
	if ok, _, err := filler.Exists(ctx, mark); err != nil || ok {
		t.Fatalf("%s on the other ensemble: exists %v, %v", mark, ok, err)
	}
	if !strings.Contains(log.String(), "another ensemble") {
		t.Fatalf("the other ensemble's server was never refused: nothing tested\nlog:\n%s", log.String())
	}
	l := log.String()
	t.Logf("the other ensemble's server refused: its expiry (%v), its new session (%v)",
		strings.Contains(l, "says the session expired, but holds none"), strings.Contains(l, "granted a new session, but holds none"))
}

// TestExpiryBelievedAfterTheLatestMarksWereDeleted: the session read a
// root, then more elections under it than marks are kept; another
// process deletes every election (the shards removed and pruned); the
// session expires. The ensemble's server still holds the root, a mark, so
// its "expired" is believed and a new session made, with no warning of
// another ensemble. Before, the marks were the 8 latest, all deleted
// elections: the real ensemble was refused as foreign.
func TestExpiryBelievedAfterTheLatestMarksWereDeleted(t *testing.T) {
	p := proxyAt(t, "127.0.0.1:0")
	var log logBuffer
	c := dialT(t, []string{p.Addrs()[0]}, Config{Timeout: 4 * time.Second, Log: zerolog.New(&log).Level(zerolog.InfoLevel)})
	root := markZnode(t, c)
	other := dialT(t, zkc.Addrs(), Config{Timeout: 4 * time.Second})
	var elections []string
	for i := range maxMarks + 4 {
		path := fmt.Sprintf("%s/shard-%d", root, i)
		if _, _, err := c.Create2(t.Context(), path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
		elections = append(elections, path)
	}
	for _, path := range elections { // by another process: c still holds their marks
		if err := other.Delete(t.Context(), path, -1); err != nil {
			t.Fatalf("delete %s: %v", path, err)
		}
	}
	k := newEventSink()
	c.Subscribe(k)
	old := expireDuringCut(t, c, p)
	awaitNewSession(t, c, k, old, &log)
	if l := log.String(); strings.Contains(l, "another ensemble") {
		t.Errorf("the session's own ensemble was taken for another:\n%s", l)
	}
}
