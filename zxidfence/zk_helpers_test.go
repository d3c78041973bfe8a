package zxidfence_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/zxidfence"
)

type quietZKLogger struct{}

func (quietZKLogger) Printf(string, ...any) {}

// connectZK opens a session on the shared ZooKeeper, closed with the test.
func connectZK(t testing.TB) *zk.Conn {
	conn, _ := connectZKEvents(t)
	return conn
}

// connectZKEvents is connectZK that also records the session's state
// changes, none dropped.
func connectZKEvents(t testing.TB) (*zk.Conn, *sessionStates) {
	t.Helper()
	states := &sessionStates{changed: make(chan struct{})}
	conn, _, err := zk.Connect(zkc.Addrs(), 10*time.Second, zk.WithLogger(quietZKLogger{}), zk.WithEventCallback(states.record))
	if err != nil {
		t.Fatalf("connect to ZooKeeper: %v", err)
	}
	t.Cleanup(conn.Close)
	return conn, states
}

// sessionStates records a connection's session states in order.
type sessionStates struct {
	mu      sync.Mutex
	states  []zk.State
	changed chan struct{} // closed and replaced on every new state
}

func (s *sessionStates) record(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states = append(s.states, ev.State)
	close(s.changed)
	s.changed = make(chan struct{})
}

// mark returns the position after the states recorded so far.
func (s *sessionStates) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.states)
}

// await waits until the states recorded from position from on contain want
// in order (not necessarily adjacent).
func (s *sessionStates) await(ctx context.Context, t testing.TB, from int, want ...zk.State) {
	t.Helper()
	for len(want) > 0 {
		s.mu.Lock()
		for ; from < len(s.states) && len(want) > 0; from++ {
			if s.states[from] == want[0] {
				want = want[1:]
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if len(want) == 0 {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for ZooKeeper session state %v: %v", want[0], ctx.Err())
		}
	}
}

// freshZnode creates a new persistent znode for one test and returns its path.
func freshZnode(t testing.TB, conn *zk.Conn) string {
	t.Helper()
	p := fmt.Sprintf("/zxidfence-test-%d", tables.Add(1))
	if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	return p
}

// campaign creates an ephemeral sequential election znode under dir on conn
// and returns the Leader it makes (token: its czxid), as a leader elected
// by the recipe would hold.
func campaign(t testing.TB, conn *zk.Conn, dir string) zxidfence.Leader {
	t.Helper()
	p, err := conn.Create(dir+"/n_", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatalf("create election znode under %s: %v", dir, err)
	}
	_, st, err := conn.Get(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	tok, err := zxidfence.FromZxid(st.Czxid)
	if err != nil {
		t.Fatal(err)
	}
	return zxidfence.Leader{Znode: p, Version: st.Version, Fence: zxidfence.At(tok)}
}

// zkGuard adapts the ZooKeeper guard to the Guard interface for the shared
// semantics tests: key k is the znode <dir>/k, written for one election
// znode that lives throughout (version -1) with the fence under test. Its
// Do is not atomic with fn: the real guard's atomicity is its multi.
type zkGuard struct {
	z        *zxidfence.ZooKeeper
	dir      string
	election string
}

func newZKGuard(t testing.TB) zkGuard {
	conn := connectZK(t)
	z, err := zxidfence.NewZooKeeper(conn)
	if err != nil {
		t.Fatal(err)
	}
	dir := freshZnode(t, conn)
	return zkGuard{z: z, dir: dir, election: campaign(t, conn, dir).Znode}
}

func (g zkGuard) path(key string) string { return g.dir + "/" + key }

func (g zkGuard) Do(ctx context.Context, key string, f zxidfence.Fence, fn func(context.Context) error) error {
	if err := g.z.Write(ctx, g.path(key), zxidfence.Leader{Znode: g.election, Version: -1, Fence: f}, nil); err != nil {
		return err
	}
	if fn == nil {
		return nil
	}
	return fn(ctx)
}

func (g zkGuard) Highest(ctx context.Context, key string) (zxidfence.Fence, error) {
	return g.z.Highest(ctx, g.path(key))
}

func (g zkGuard) AcceptGeneration(ctx context.Context, key string, gen uint64, reason string) (zxidfence.Fence, error) {
	return g.z.AcceptGeneration(ctx, g.path(key), gen, reason)
}
