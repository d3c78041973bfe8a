package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// obsWait bounds every wait of these tests for an event; it is never the
// thing measured.
const obsWait = 20 * time.Second

// obsSession connects a recipe.Session to the shared cluster and closes it
// at cleanup.
func obsSession(t *testing.T, servers string) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), obsWait)
	defer cancel()
	s, err := recipe.Connect(ctx, strings.Split(servers, ","), recipe.WithSessionTimeout(2*time.Second))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// obsRaw opens a plain go-zookeeper connection (a stand-in for another
// client: Curator, kazoo, an operator) and waits for its session.
func obsRaw(t *testing.T, servers string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(strings.Split(servers, ","), 2*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(obsQuietLogger{}))
	if err != nil {
		t.Fatalf("raw connect: %v", err)
	}
	t.Cleanup(conn.Close)
	timeout := time.After(obsWait)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() { // drain, so go-zookeeper never blocks on its event channel
					for range events {
					}
				}()
				return conn
			}
		case <-timeout:
			t.Fatalf("raw connection got no session within %v", obsWait)
		}
	}
}

type obsQuietLogger struct{}

func (obsQuietLogger) Printf(string, ...any) {}

// obsPath returns a fresh election path for the test, created with its
// parents by conn.
func obsPath(t *testing.T, conn *zk.Conn) string {
	t.Helper()
	p := "/observe/" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	for _, q := range []string{"/observe", p} {
		if _, err := conn.Create(q, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", q, err)
		}
	}
	return p
}

// obsJoin creates an ephemeral sequential candidate znode named prefix+seq
// with data id, as another client would, and returns its full path.
func obsJoin(t *testing.T, conn *zk.Conn, path, prefix, id string) string {
	t.Helper()
	p, err := conn.Create(path+"/"+prefix, []byte(id), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("create candidate %s/%s: %v", path, prefix, err)
	}
	return p
}

func TestLeaderOfMissingOrEmptyElection(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	ctx := t.Context()

	for _, path := range []string{"/observe/never-created", obsPath(t, raw)} {
		if _, err := recipe.Leader(ctx, s, path); !errors.Is(err, recipe.ErrNoLeader) {
			t.Errorf("Leader(%s) error = %v, want ErrNoLeader", path, err)
		}
		ps, err := recipe.Participants(ctx, s, path)
		if err != nil || len(ps) != 0 {
			t.Errorf("Participants(%s) = %v, %v; want none", path, ps, err)
		}
	}
}

func TestParticipantsInElectionOrderAcrossConventions(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	ctx := t.Context()

	// Not a candidate: no sequence suffix. Must be ignored.
	if _, err := raw.Create(path+"/config", []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		obsJoin(t, raw, path, "_c_0f8fad5b-d9cb-469f-a165-70867728950e-latch-", "curator"),
		obsJoin(t, raw, path, "9c8589018a57479181fe4c455b099bc9__lock__", "kazoo"),
		obsJoin(t, raw, path, "_c_7c9e6679-7425-40de-944b-e07fc1f90ae7-lock-", "curator-lock"),
		obsJoin(t, raw, path, "n_", "plain"),
	}
	ps, err := recipe.Participants(ctx, s, path)
	if err != nil {
		t.Fatalf("Participants: %v", err)
	}
	if len(ps) != len(want) {
		t.Fatalf("Participants = %+v, want %d candidates", ps, len(want))
	}
	ids := []string{"curator", "kazoo", "curator-lock", "plain"}
	for i, p := range ps {
		_, st, err := raw.Get(want[i])
		if err != nil {
			t.Fatal(err)
		}
		if p.Znode != want[i] || p.ID != ids[i] || p.Leader != (i == 0) ||
			p.Token != zxidfence.Token(st.Czxid) || p.SessionID != raw.SessionID() ||
			!strings.HasSuffix(p.Znode, fmt.Sprintf("%010d", p.Seq)) {
			t.Errorf("participant %d = %+v, want znode %s id %q token %d session %d leader %v",
				i, p, want[i], ids[i], st.Czxid, raw.SessionID(), i == 0)
		}
	}
	l, err := recipe.Leader(ctx, s, path)
	if err != nil || l != ps[0] {
		t.Fatalf("Leader = %+v, %v; want %+v", l, err, ps[0])
	}
}

func TestObserveInputErrors(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	ctx := t.Context()
	for _, path := range []string{"relative", "/trailing/", "/zookeeper/quota", ""} {
		if _, err := recipe.Leader(ctx, s, path); !errors.Is(err, recipe.ErrInvalidPath) {
			t.Errorf("Leader(%q) error = %v, want ErrInvalidPath", path, err)
		}
		if _, err := recipe.Participants(ctx, s, path); !errors.Is(err, recipe.ErrInvalidPath) {
			t.Errorf("Participants(%q) error = %v, want ErrInvalidPath", path, err)
		}
		obs, ok := <-recipe.Observe(ctx, s, path)
		if !ok || !errors.Is(obs.Err, recipe.ErrInvalidPath) {
			t.Errorf("Observe(%q) first = %+v, %v; want ErrInvalidPath", path, obs, ok)
		}
	}
	if _, err := recipe.Leader(ctx, nil, "/x"); !errors.Is(err, recipe.ErrNilSession) {
		t.Errorf("Leader(nil session) error = %v, want ErrNilSession", err)
	}
	if _, err := recipe.Participants(ctx, nil, "/x"); !errors.Is(err, recipe.ErrNilSession) {
		t.Errorf("Participants(nil session) error = %v, want ErrNilSession", err)
	}
	ch := recipe.Observe(ctx, nil, "/x")
	if obs := <-ch; !errors.Is(obs.Err, recipe.ErrNilSession) {
		t.Errorf("Observe(nil session) = %+v, want ErrNilSession", obs)
	}
	if _, ok := <-ch; ok {
		t.Error("Observe(nil session) channel not closed after the error")
	}
}

// nextObservation returns the next observation or fails the test.
func nextObservation(t *testing.T, ch <-chan recipe.Observation, what string) recipe.Observation {
	t.Helper()
	select {
	case obs, ok := <-ch:
		if !ok {
			t.Fatalf("observation channel closed while waiting for %s", what)
		}
		return obs
	case <-time.After(obsWait):
		t.Fatalf("no observation within %v while waiting for %s", obsWait, what)
	}
	return recipe.Observation{}
}

// expectLeader reads observations until one names znode as leader (or no
// leader when znode is ""), failing on any other leader seen first except
// the tolerated ones.
func expectLeader(t *testing.T, ch <-chan recipe.Observation, znode string, tolerate ...string) recipe.Observation {
	t.Helper()
	for {
		obs := nextObservation(t, ch, "leader "+znode)
		switch {
		case obs.Err != nil:
			t.Logf("transient observation error: %v", obs.Err)
		case znode == "" && !obs.HasLeader:
			return obs
		case obs.HasLeader && obs.Leader.Znode == znode:
			return obs
		case obs.HasLeader && slices.Contains(tolerate, obs.Leader.Znode):
		default:
			t.Fatalf("observed %+v while waiting for leader %q", obs, znode)
		}
	}
}

func TestObserveReportsEveryLeaderChange(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := "/observe/" + t.Name() // Observe starts before the path exists
	ctx, cancel := context.WithCancel(t.Context())
	ch := recipe.Observe(ctx, s, path)

	expectLeader(t, ch, "")
	obsPath(t, raw)
	a := obsJoin(t, raw, path, "n_", "a")
	if obs := expectLeader(t, ch, a); obs.Leader.ID != "a" || !obs.Leader.Leader {
		t.Fatalf("observed %+v, want participant a marked leader", obs.Leader)
	}
	b := obsJoin(t, raw, path, "n_", "b")
	c := obsJoin(t, raw, path, "n_", "c")
	// A follower leaving changes nothing; the leader leaving hands over to
	// the next in line, never to anyone else.
	if err := raw.Delete(b, -1); err != nil {
		t.Fatal(err)
	}
	if err := raw.Delete(a, -1); err != nil {
		t.Fatal(err)
	}
	if obs := expectLeader(t, ch, c); obs.Leader.ID != "c" {
		t.Fatalf("observed %+v, want c", obs.Leader)
	}
	if err := raw.Delete(c, -1); err != nil {
		t.Fatal(err)
	}
	expectLeader(t, ch, "")

	cancel()
	for obs := range ch { // must close
		if obs.HasLeader {
			t.Errorf("observation after the last change: %+v", obs)
		}
	}
}

func TestObserveFollowsLeaderAcrossSessionExpiry(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	ctx := t.Context()
	ch := recipe.Observe(ctx, s, path)
	expectLeader(t, ch, "")
	a := obsJoin(t, raw, path, "n_", "a")
	expectLeader(t, ch, a)

	// The observer's session expires; while it has none, the leader changes.
	// The watch on a is lost with the session: the observer must re-read.
	if err := testenv.ExpireConn(ctx, zkc.Addrs(), s.Conn()); err != nil {
		t.Fatalf("expire observer session: %v", err)
	}
	b := obsJoin(t, raw, path, "n_", "b")
	if err := raw.Delete(a, -1); err != nil {
		t.Fatal(err)
	}
	expectLeader(t, ch, b, a)
}

func TestObserveClosesWhenContextDone(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	ctx, cancel := context.WithCancel(t.Context())
	ch := recipe.Observe(ctx, s, path)
	expectLeader(t, ch, "")
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("observation after cancel instead of a closed channel")
		}
	case <-time.After(obsWait):
		t.Fatalf("channel not closed within %v of cancel", obsWait)
	}
}

func TestObserveReportsLostContactThenTheNewLeader(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	s := obsSession(t, proxy.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	ch := recipe.Observe(t.Context(), s, path)
	expectLeader(t, ch, "")
	a := obsJoin(t, raw, path, "n_", "a")
	expectLeader(t, ch, a)

	// Cut off, the observer cannot know the leader: it says so, instead of
	// repeating a leader that may be gone (and here is).
	proxy.Blackhole()
	for {
		obs := nextObservation(t, ch, "lost contact")
		if errors.Is(obs.Err, recipe.ErrSuspended) || errors.Is(obs.Err, recipe.ErrSessionExpired) {
			if obs.HasLeader {
				t.Fatalf("observation %+v names a leader while cut off", obs)
			}
			break
		}
		if obs.Err == nil {
			t.Fatalf("observed %+v while the connection was blackholed", obs)
		}
	}
	b := obsJoin(t, raw, path, "n_", "b")
	if err := raw.Delete(a, -1); err != nil {
		t.Fatal(err)
	}
	proxy.Heal()
	expectLeader(t, ch, b)
}

// TestObserveHoldsOneWatch: an observer holds a single watch, on the
// leader's znode (a child watch on the path only while there is no leader),
// followers joining do not add any, and it leaves none behind.
func TestObserveHoldsOneWatch(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch := recipe.Observe(ctx, s, path)
	expectLeader(t, ch, "")
	watching := func(children int, data ...string) {
		t.Helper()
		await(t, fmt.Sprintf("observer watches %v and %d child watch", data, children), func() string {
			got := serverWatches(t.Context(), t, zkc, path)[s.ID()]
			if c := childWatchCount(t.Context(), t, zkc); !slices.Equal(got, data) || c != children {
				return fmt.Sprintf("observer session has data watches %v, server has %d child watches", got, c)
			}
			return ""
		})
	}
	watching(1)

	a := obsJoin(t, raw, path, "n_", "a")
	expectLeader(t, ch, a)
	for i := range 5 {
		obsJoin(t, raw, path, "n_", fmt.Sprintf("f%d", i))
	}
	watching(0, a)

	cancel()
	for range ch {
	}
	watching(0)
}

func TestObserveEndsWhenSessionCloses(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	path := obsPath(t, raw)
	ch := recipe.Observe(t.Context(), s, path)
	expectLeader(t, ch, "")
	if err := s.Close(); err != nil {
		t.Fatalf("close session: %v", err)
	}
	var last recipe.Observation
	for obs := range ch {
		last = obs
	}
	if !errors.Is(last.Err, recipe.ErrSessionClosed) {
		t.Fatalf("last observation %+v, want ErrSessionClosed", last)
	}
	if _, err := recipe.Leader(t.Context(), s, path); !errors.Is(err, recipe.ErrSessionClosed) {
		t.Errorf("Leader on a closed session: %v, want ErrSessionClosed", err)
	}
	if _, err := recipe.Participants(t.Context(), s, path); !errors.Is(err, recipe.ErrSessionClosed) {
		t.Errorf("Participants on a closed session: %v, want ErrSessionClosed", err)
	}
}
