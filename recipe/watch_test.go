package recipe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/zkelect/zkelect/recipe"
)

// These tests cover Session.GetW, ChildrenW and ExistsW against a real
// server: events, the server's watch table (wchc, mntr) after a cancel,
// connection loss, replies larger than the session keeps off the wire.

// watchPathSeq tells apart the runs of one test (go test -count).
var watchPathSeq atomic.Int64

// watchPath creates /watchapi/<test name>-<n> and returns it.
func watchPath(t *testing.T, raw *zk.Conn) string {
	t.Helper()
	p := fmt.Sprintf("/watchapi/%s-%d", strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()), watchPathSeq.Add(1))
	for _, q := range []string{"/watchapi", p} {
		if _, err := raw.Create(q, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", q, err)
		}
	}
	return p
}

// mustCreate creates a persistent znode with data.
func mustCreate(t *testing.T, raw *zk.Conn, p string, data []byte) {
	t.Helper()
	if _, err := raw.Create(p, data, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}

// expectEvent waits for the one event of a watch channel and checks that
// the channel is closed after it.
func expectEvent(t *testing.T, ch <-chan zk.Event, typ zk.EventType, path string) zk.Event {
	t.Helper()
	var ev zk.Event
	select {
	case ev = <-ch:
	case <-time.After(obsWait):
		t.Fatalf("no %v on %s within %v", typ, path, obsWait)
	}
	if ev.Type != typ || ev.Path != path {
		t.Fatalf("event %+v, want %v on %s", ev, typ, path)
	}
	if _, open := <-ch; open {
		t.Fatalf("watch channel of %s still open after its event", path)
	}
	return ev
}

// expectQuiet checks that ch has no event (yet).
func expectQuiet(t *testing.T, ch <-chan zk.Event, what string) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("%s: unexpected event %+v", what, ev)
	default:
	}
}

// sessionWatches waits until the server's watch table shows exactly data
// (sorted) as the session's data and exists watches under prefix, and
// children child watches in all sessions.
func sessionWatches(t *testing.T, s *recipe.Session, prefix string, children int, data ...string) {
	t.Helper()
	slices.Sort(data)
	await(t, fmt.Sprintf("server watches %v and %d child watches", data, children), func() string {
		got := serverWatches(t.Context(), t, zkc, prefix)[s.ID()]
		if c := childWatchCount(t.Context(), t, zkc); !slices.Equal(got, data) || c != children {
			return fmt.Sprintf("session has data watches %v, server has %d child watches", got, c)
		}
		return ""
	})
}

func TestWatchedReadsFireOnChange(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	dir := watchPath(t, raw)
	ctx := t.Context()
	node, missing := dir+"/node", dir+"/missing"
	mustCreate(t, raw, node, []byte("v1"))

	data, st, dataCh, err := s.GetW(ctx, node)
	if err != nil || string(data) != "v1" || st.Version != 0 {
		t.Fatalf("GetW = %q, %+v, %v", data, st, err)
	}
	names, st, childCh, err := s.ChildrenW(ctx, dir)
	if err != nil || !slices.Equal(names, []string{"node"}) || st.NumChildren != 1 {
		t.Fatalf("ChildrenW = %v, %+v, %v", names, st, err)
	}
	ok, st, createCh, err := s.ExistsW(ctx, missing)
	if err != nil || ok || st != nil {
		t.Fatalf("ExistsW(missing) = %v, %+v, %v", ok, st, err)
	}
	ok, st, deleteCh, err := s.ExistsW(ctx, node)
	if err != nil || !ok || st.DataLength != 2 {
		t.Fatalf("ExistsW(node) = %v, %+v, %v", ok, st, err)
	}
	sessionWatches(t, s, dir, 1, node, missing)
	noClientWatches(t, s.Conn())

	// A data change fires both data watches of node (GetW's and ExistsW's
	// share the server's one), nothing else.
	if _, err := raw.Set(node, []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, dataCh, zk.EventNodeDataChanged, node)
	expectEvent(t, deleteCh, zk.EventNodeDataChanged, node)
	expectQuiet(t, childCh, "children after a data change")
	expectQuiet(t, createCh, "exists of another path")

	mustCreate(t, raw, missing, nil)
	expectEvent(t, createCh, zk.EventNodeCreated, missing)
	expectEvent(t, childCh, zk.EventNodeChildrenChanged, dir)

	// One-shot: nothing stays armed after the events, on either side.
	sessionWatches(t, s, dir, 0)

	// A znode's deletion fires its data and child watches.
	_, _, dataCh, err = s.GetW(ctx, missing)
	if err != nil {
		t.Fatal(err)
	}
	_, _, childCh, err = s.ChildrenW(ctx, missing)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Delete(missing, -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, dataCh, zk.EventNodeDeleted, missing)
	expectEvent(t, childCh, zk.EventNodeDeleted, missing)
	noClientWatches(t, s.Conn())
}

func TestWatchedReadsOfMissingZnodeLeaveNoWatch(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	dir := watchPath(t, raw)
	ctx := t.Context()
	if _, _, ch, err := s.GetW(ctx, dir+"/none"); !errors.Is(err, zk.ErrNoNode) || ch != nil {
		t.Fatalf("GetW of a missing znode: %v, channel %v; want zk.ErrNoNode and none", err, ch)
	}
	if _, _, ch, err := s.ChildrenW(ctx, dir+"/none"); !errors.Is(err, zk.ErrNoNode) || ch != nil {
		t.Fatalf("ChildrenW of a missing znode: %v, channel %v; want zk.ErrNoNode and none", err, ch)
	}
	sessionWatches(t, s, dir, 0)
}

func TestWatchCancelRemovesServerWatch(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	dir := watchPath(t, raw)
	node, missing := dir+"/node", dir+"/missing"
	mustCreate(t, raw, node, []byte("x"))

	ctxA, cancelA := context.WithCancel(t.Context())
	ctxB, cancelB := context.WithCancel(t.Context())
	defer cancelA()
	defer cancelB()
	_, _, getA, err := s.GetW(ctxA, node)
	if err != nil {
		t.Fatal(err)
	}
	_, _, getB, err := s.GetW(ctxB, node)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.ExistsW(ctxA, missing); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.ChildrenW(ctxA, dir); err != nil {
		t.Fatal(err)
	}
	sessionWatches(t, s, dir, 1, node, missing)

	// A's cancel removes the exists and child watches; node's data watch
	// stays for B, which shares it.
	cancelA()
	sessionWatches(t, s, dir, 0, node)
	if _, err := raw.Set(node, []byte("y"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, getB, zk.EventNodeDataChanged, node)
	expectQuiet(t, getA, "a cancelled watch")

	// The last user's cancel removes the watch from the server.
	if _, _, _, err := s.GetW(ctxB, node); err != nil {
		t.Fatal(err)
	}
	sessionWatches(t, s, dir, 0, node)
	cancelB()
	sessionWatches(t, s, dir, 0)
}

func TestWatchEndsWithConnectionAndReArms(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	s := obsSession(t, proxy.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	dir := watchPath(t, raw)
	ctx := t.Context()
	node := dir + "/node"
	mustCreate(t, raw, node, nil)

	_, _, getCh, err := s.GetW(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	_, _, childCh, err := s.ChildrenW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	_, _, existsCh, err := s.ExistsW(ctx, dir+"/later")
	if err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	for p, ch := range map[string]<-chan zk.Event{node: getCh, dir: childCh, dir + "/later": existsCh} {
		ev := expectEvent(t, ch, zk.EventNotWatching, p)
		if ev.State != zk.StateDisconnected || !errors.Is(ev.Err, zk.ErrConnectionClosed) {
			t.Fatalf("event %+v, want StateDisconnected with zk.ErrConnectionClosed", ev)
		}
	}

	// Read again (waiting for the reconnect): the watches are set anew.
	_, _, getCh, err = s.GetW(ctx, node)
	if err != nil {
		t.Fatalf("GetW after reconnect: %v", err)
	}
	_, _, childCh, err = s.ChildrenW(ctx, dir)
	if err != nil {
		t.Fatalf("ChildrenW after reconnect: %v", err)
	}
	if _, err := raw.Set(node, []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, getCh, zk.EventNodeDataChanged, node)
	mustCreate(t, raw, dir+"/later", nil)
	expectEvent(t, childCh, zk.EventNodeChildrenChanged, dir)
	noClientWatches(t, s.Conn())
}

// TestWatchedReadsOfLargeReplies reads data and child lists larger than the
// session keeps off the wire (64 KiB): they come back whole, and the watch
// is armed.
func TestWatchedReadsOfLargeReplies(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	dir := watchPath(t, raw)
	ctx := t.Context()

	big := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16) // 200 KiB
	mustCreate(t, raw, dir+"/big", big)
	data, st, getCh, err := s.GetW(ctx, dir+"/big")
	if err != nil || !bytes.Equal(data, big) || st.DataLength != int32(len(big)) {
		t.Fatalf("GetW of %d bytes: %d bytes, %+v, %v", len(big), len(data), st, err)
	}

	const n = 1000 // names of 100 bytes: a reply of about 100 KiB
	parent := dir + "/many"
	mustCreate(t, raw, parent, nil)
	var want []string
	for i := 0; i < n; i += 250 {
		var ops []any
		for j := i; j < i+250; j++ {
			name := fmt.Sprintf("%04d-%s", j, strings.Repeat("x", 95))
			want = append(want, name)
			ops = append(ops, &zk.CreateRequest{Path: parent + "/" + name, Acl: zk.WorldACL(zk.PermAll)})
		}
		if _, err := raw.Multi(ops...); err != nil {
			t.Fatalf("create children: %v", err)
		}
	}
	names, st, childCh, err := s.ChildrenW(ctx, parent)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, want) || st.NumChildren != n {
		t.Fatalf("ChildrenW of %d children: %d names, %+v, %v", n, len(names), st, err)
	}

	if _, err := raw.Set(dir+"/big", nil, -1); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, getCh, zk.EventNodeDataChanged, dir+"/big")
	mustCreate(t, raw, parent+"/one-more", nil)
	expectEvent(t, childCh, zk.EventNodeChildrenChanged, parent)
}

func TestWatchedReadsRefuseBadInput(t *testing.T) {
	s := obsSession(t, zkc.ConnectString())
	ctx := t.Context()
	var nilSession *recipe.Session
	if _, _, _, err := nilSession.GetW(ctx, "/x"); !errors.Is(err, recipe.ErrNilSession) {
		t.Errorf("GetW on a nil session: %v, want ErrNilSession", err)
	}
	for _, p := range []string{"", "x", "/a/", "/a//b", "/a/../b", "/a\x00b"} {
		if _, _, _, err := s.ChildrenW(ctx, p); !errors.Is(err, recipe.ErrInvalidPath) {
			t.Errorf("ChildrenW(%q): %v, want ErrInvalidPath", p, err)
		}
	}
	if _, _, _, err := s.ChildrenW(ctx, "/"); err != nil {
		t.Errorf("ChildrenW(/): %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, _, err := s.ExistsW(done, "/x"); !errors.Is(err, context.Canceled) {
		t.Errorf("ExistsW with a cancelled ctx: %v, want context.Canceled", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.GetW(ctx, "/x"); !errors.Is(err, recipe.ErrSessionClosed) {
		t.Errorf("GetW on a closed session: %v, want ErrSessionClosed", err)
	}
}

// TestWatchesAcrossRepeatedReconnects keeps three watch loops re-arming
// while the connection is cut again and again (run it under -race: this is
// where go-zookeeper v1.0.4 races when it holds watchers), then checks that
// real changes still fire and that nothing is left behind.
func TestWatchesAcrossRepeatedReconnects(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	proxy := zkc.NewProxyT(t)
	s := obsSession(t, proxy.ConnectString())
	raw := obsRaw(t, zkc.ConnectString())
	dir := watchPath(t, raw)
	node := dir + "/node"
	mustCreate(t, raw, node, nil)

	ctx, cancel := context.WithCancel(t.Context())
	reports := make(chan watchReport)
	reads := []func(context.Context) (<-chan zk.Event, error){
		func(ctx context.Context) (<-chan zk.Event, error) { _, _, ch, err := s.GetW(ctx, node); return ch, err },
		func(ctx context.Context) (<-chan zk.Event, error) {
			_, _, ch, err := s.ChildrenW(ctx, dir)
			return ch, err
		},
		func(ctx context.Context) (<-chan zk.Event, error) {
			_, _, ch, err := s.ExistsW(ctx, dir+"/new")
			return ch, err
		},
	}
	done := make(chan struct{})
	for i, read := range reads {
		go func() {
			defer func() { done <- struct{}{} }()
			watchLoop(ctx, i, read, reports)
		}()
	}
	stopLoops := sync.OnceFunc(func() {
		cancel()
		for range reads {
			<-done
		}
	})
	defer stopLoops()

	// Each loop's state, from its reports: armed now, watches lost, the
	// type of a real event seen.
	type loopState struct {
		armed bool
		lost  int
		fired zk.EventType
	}
	states := make([]loopState, len(reads))
	until := func(what string, done func(loopState) bool) {
		t.Helper()
		deadline := time.After(obsWait)
		for slices.ContainsFunc(states, func(st loopState) bool { return !done(st) }) {
			select {
			case r := <-reports:
				st := &states[r.loop]
				st.armed = r.ev.Type == 0
				switch r.ev.Type {
				case 0:
				case zk.EventNotWatching:
					st.lost++
				default:
					st.fired = r.ev.Type
				}
			case <-deadline:
				t.Fatalf("%s: loops %+v within %v", what, states, obsWait)
			}
		}
	}
	armed := func(st loopState) bool { return st.armed }
	for round := range 5 {
		until(fmt.Sprintf("round %d: armed", round), armed)
		proxy.Cut()
		until(fmt.Sprintf("round %d: watch lost", round), func(st loopState) bool { return st.lost > round })
	}
	until("armed after the last cut", armed)
	if _, err := raw.Set(node, []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, raw, dir+"/new", nil)
	until("real changes seen", func(st loopState) bool { return st.fired != 0 })
	want := []zk.EventType{zk.EventNodeDataChanged, zk.EventNodeChildrenChanged, zk.EventNodeCreated}
	for i, typ := range want {
		if states[i].fired != typ {
			t.Errorf("loop %d saw %v, want %v", i, states[i].fired, typ)
		}
	}
	stopLoops()
	sessionWatches(t, s, dir, 0)
	noClientWatches(t, s.Conn())
}

// watchReport is a watch loop's news: armed (a zero event), or its event.
type watchReport struct {
	loop int
	ev   zk.Event
}

// watchLoop arms a watch with read, reports it armed and then its event,
// and again, until ctx ends. A failed read is retried after 10ms.
func watchLoop(ctx context.Context, i int, read func(context.Context) (<-chan zk.Event, error), out chan<- watchReport) {
	send := func(ev zk.Event) {
		select {
		case out <- watchReport{i, ev}:
		case <-ctx.Done():
		}
	}
	for ctx.Err() == nil {
		ch, err := read(ctx)
		if err != nil {
			retry := time.NewTimer(10 * time.Millisecond)
			select {
			case <-retry.C:
			case <-ctx.Done():
				retry.Stop()
			}
			continue
		}
		send(zk.Event{})
		select {
		case ev := <-ch:
			send(ev)
		case <-ctx.Done():
		}
	}
}
