package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// reconnect cuts every connection of p and waits for a read through the
// session, so the session has reconnected somewhere.
func reconnect(t *testing.T, p *testenv.Proxy, s *recipe.Session) {
	t.Helper()
	p.Cut()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, _, err := s.Exists(ctx, "/"); err != nil {
		t.Fatalf("read after a cut: %v", err)
	}
}

// TestAnotherEnsembleAtAReusedAddressIsRefused: one of the three
// configured addresses is taken over by a server of another ensemble
// whose zxids are ahead (it accepts the session's last zxid and answers
// that the session expired): no new session is made there, no election
// znode is created there, and every leadership the candidate gets is on
// its own ensemble, with tokens a shared guard accepts in order.
func TestAnotherEnsembleAtAReusedAddressIsRefused(t *testing.T) {
	own := testenv.New(t, testenv.Options{Servers: 1})
	other := testenv.New(t, testenv.Options{Servers: 1})
	foreign := rawConn(t, other.ConnectString())
	for i := range 50 { // the other ensemble is ahead in zxids
		if _, err := foreign.Create(fmt.Sprintf("/filler-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	addr := own.Addrs()[0]
	p, err := testenv.ListenProxy([]string{addr, addr, addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	path := electionPath(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, path)
	guard := zxidfence.NewMemory()
	accept := func(l *recipe.Leadership) {
		t.Helper()
		if l.SessionID() != s.ID() {
			t.Fatalf("leadership on session %x, the session is %x", l.SessionID(), s.ID())
		}
		err := guard.Do(context.Background(), path, zxidfence.At(l.Token()), func(context.Context) error { return nil })
		if err != nil {
			t.Fatalf("guard refused the leader's token %v: %v", l.Token(), err)
		}
	}
	accept(lead(t, c))
	id := s.ID()

	if err := p.Retarget(0, other.Addrs()[0]); err != nil {
		t.Fatal(err)
	}
	// go-zookeeper tries the addresses in turn: six cuts reach the
	// taken-over one at least twice.
	for range 6 {
		reconnect(t, p, s)
		if s.ID() != id {
			t.Fatalf("session %x replaced by %x after the address moved to another ensemble", id, s.ID())
		}
	}
	accept(lead(t, c))
	if s.HeldBefore(id) || s.ID() != id {
		t.Fatalf("session %x ended (now %x)", id, s.ID())
	}
	if ok, _, err := foreign.Exists(path); err != nil || ok {
		t.Fatalf("election path %s on the other ensemble: exists %v, %v", path, ok, err)
	}
	if ok, _, err := foreign.Exists("/recipe-test"); err != nil || ok {
		t.Fatalf("/recipe-test on the other ensemble: exists %v, %v", ok, err)
	}
}

// TestWipedEnsembleThenBlipsKeepTheSession: after the wiped-ensemble
// recovery the new session presents the rebuilt ensemble's zxids, so each
// later connection loss is a reconnect of the same session, not a refusal
// that ends it.
func TestWipedEnsembleThenBlipsKeepTheSession(t *testing.T) {
	path := electionPath(t)
	old := testenv.New(t, testenv.Options{Servers: 1})
	rw := rawConn(t, old.ConnectString())
	for i := range 50 { // the old ensemble is well ahead of a fresh one
		if _, err := rw.Create(fmt.Sprintf("/filler-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	p := newSwitchProxy(t, old.Addrs()[0])
	s := session(t, p.l.Addr().String())
	c := candidate(t, s, path)
	first := lead(t, c)
	fresh := testenv.New(t, testenv.Options{Servers: 1})
	p.Switch(fresh.Addrs()[0])
	awaitEnd(t, first, "leadership to end when the ensemble was wiped")
	lead(t, c)
	id := s.ID()
	for i := range 3 {
		p.Switch(fresh.Addrs()[0]) // a blip: every connection cut
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		_, _, err := s.Exists(ctx, "/")
		cancel()
		if err != nil {
			t.Fatalf("read after blip %d: %v", i+1, err)
		}
		if s.ID() != id {
			t.Fatalf("blip %d after the wipe: session %x replaced by %x", i+1, id, s.ID())
		}
	}
}

// TestZooKeeperGuardRefusesAnotherEnsemblesLeader: the ZooKeeper guard
// checks the writer's election znode on its own ensemble, where a leader
// elected on another ensemble has none: its write is refused
// (ErrNotLeader) whatever its token, while the guard's own ensemble's
// leader writes.
func TestZooKeeperGuardRefusesAnotherEnsemblesLeader(t *testing.T) {
	other := testenv.New(t, testenv.Options{Servers: 1})
	own := session(t, zkc.ConnectString())
	foreign := session(t, other.ConnectString())
	path := electionPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	impostor := lead(t, candidate(t, foreign, path))
	leader := lead(t, candidate(t, own, path)) // creates path's parents on the guard's ensemble
	guard, err := zxidfence.NewZooKeeperSession(own)
	if err != nil {
		t.Fatal(err)
	}
	target := path + "-target"
	err = guard.Write(ctx, target, zxidfence.LeaderOf(impostor, 0), []byte("impostor"))
	if !errors.Is(err, zxidfence.ErrNotLeader) {
		t.Fatalf("write by another ensemble's leader (token %v): %v, want ErrNotLeader", impostor.Token(), err)
	}
	if err := guard.Write(ctx, target, zxidfence.LeaderOf(leader, 0), []byte("leader")); err != nil {
		t.Fatalf("write by the guard's ensemble's leader (token %v): %v", leader.Token(), err)
	}
}
