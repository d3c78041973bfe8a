package zkconn

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"
)

// tableSession returns a Conn with only what the watch table uses (no
// connection: removals are not written).
func tableSession() *Conn {
	return newConn(newWireTracker(1, time.Second, zerolog.Nop()), Config{Log: zerolog.Nop()})
}

func pending(ch <-chan zk.Event) (zk.Event, bool) {
	select {
	case ev := <-ch:
		return ev, true
	default:
		return zk.Event{}, false
	}
}

// TestWatchTableFiresOnlyAfterTheReply: an event handled before a shot's
// reply was read comes from an older watch and is ignored; after it, the
// event of the shot's kind fires it once, and the table forgets the path.
func TestWatchTableFiresOnlyAfterTheReply(t *testing.T) {
	s := tableSession()
	call := newPendingCall(s.wire.nextCallXid())
	sh, err := s.addShot(t.Context(), watchKey{"/a", watchData}, call)
	if err != nil {
		t.Fatal(err)
	}
	s.nodeEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/a"})
	if ev, ok := pending(sh.ch); ok {
		t.Fatalf("fired by %+v before its reply", ev)
	}
	call.replied.Store(true)
	s.nodeEvent(zk.Event{Type: zk.EventNodeChildrenChanged, Path: "/a"})
	s.nodeEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/b"})
	if ev, ok := pending(sh.ch); ok {
		t.Fatalf("a data watch fired by %+v", ev)
	}
	s.nodeEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: "/a"})
	if ev, ok := pending(sh.ch); !ok || ev.Type != zk.EventNodeDataChanged {
		t.Fatalf("got %+v, %v; want the data change", ev, ok)
	}
	if _, open := <-sh.ch; open {
		t.Fatal("channel open after its event")
	}
	if len(s.watches.shots) != 0 || len(s.watches.routes) != 0 {
		t.Fatalf("table %v, routes %v left after the event", s.watches.shots, s.watches.routes)
	}
}

// TestWatchTableEndsAnsweredShotsWithTheConnection: a lost connection ends
// every answered shot with EventNotWatching; a shot still awaiting its
// reply stays (its request decides).
func TestWatchTableEndsAnsweredShotsWithTheConnection(t *testing.T) {
	s := tableSession()
	answered, waiting := newPendingCall(1), newPendingCall(2)
	answered.replied.Store(true)
	a, err := s.addShot(t.Context(), watchKey{"/a", watchChild}, answered)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.addShot(t.Context(), watchKey{"/b", watchData}, waiting)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.watches.connectionLostLocked(zk.StateExpired, zk.ErrSessionExpired)
	s.mu.Unlock()
	ev, ok := pending(a.ch)
	if !ok || ev.Type != zk.EventNotWatching || ev.State != zk.StateExpired || ev.Path != "/a" || ev.Err != zk.ErrSessionExpired {
		t.Fatalf("answered shot: %+v, %v; want EventNotWatching, StateExpired", ev, ok)
	}
	if ev, ok := pending(b.ch); ok {
		t.Fatalf("shot awaiting its reply ended with %+v", ev)
	}
	s.forgetShot(b, true)
	if len(s.watches.shots) != 0 || len(s.watches.routes) != 0 {
		t.Fatalf("table %v, routes %v left", s.watches.shots, s.watches.routes)
	}
}

func TestWatchKindFiredBy(t *testing.T) {
	for _, c := range []struct {
		typ         zk.EventType
		data, child bool
	}{
		{zk.EventNodeCreated, true, false},
		{zk.EventNodeDataChanged, true, false},
		{zk.EventNodeDeleted, true, true},
		{zk.EventNodeChildrenChanged, false, true},
		{zk.EventNotWatching, false, false},
		{zk.EventSession, false, false},
	} {
		if watchData.firedBy(c.typ) != c.data || watchChild.firedBy(c.typ) != c.child {
			t.Errorf("%v: data %v child %v, want %v %v", c.typ, watchData.firedBy(c.typ), watchChild.firedBy(c.typ), c.data, c.child)
		}
	}
}
