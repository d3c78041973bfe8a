package recipe_test

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// steeringDialer dials only the servers it currently allows, and can cut
// the connections it made: a test moves a session to the server it wants.
type steeringDialer struct {
	mu      sync.Mutex
	allowed func(addr string) bool
	conns   []net.Conn
}

func (d *steeringDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	allowed := d.allowed
	d.mu.Unlock()
	if !allowed(addr) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError("steered away from " + addr)}
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.conns = append(d.conns, c)
	d.mu.Unlock()
	return c, nil
}

// steer allows only the servers allowed reports and cuts every connection.
func (d *steeringDialer) steer(allowed func(addr string) bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.allowed = allowed
	for _, c := range d.conns {
		_ = c.Close()
	}
	d.conns = nil
}

// TestALaggingFollowerRefusesAnObserverThatReadNewer: an observer has
// read a leader's token T2 that a follower F, cut off from the quorum
// leader, does not have (F still holds the earlier leader's T1). Moved to
// F, the observer's session presents the zxid of T2 (its reads went
// through the layer, not go-zookeeper, which would present an older one),
// so F refuses it ("client must try another server") instead of taking it
// on with its older view; the observer never reports T1 again, and once F
// catches up it reads T2 there.
func TestALaggingFollowerRefusesAnObserverThatReadNewer(t *testing.T) {
	zk3 := testenv.New(t, testenv.Options{Servers: 3, QuorumRelays: true, SyncLimit: 300})
	ctx, cancel := context.WithTimeout(t.Context(), 2*wait)
	defer cancel()
	lead0, err := zk3.WaitQuorumLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := (lead0 + 1) % zk3.Size()
	addrs := zk3.Addrs()
	onLeader := addrs[lead0]
	path := electionPath(t)

	first := candidate(t, session(t, onLeader), path)
	t1 := lead(t, first).Token()
	d := &steeringDialer{allowed: func(a string) bool { return a != addrs[f] }}
	obs := session(t, zk3.ConnectString(), recipe.WithDialer(d.dial), recipe.WithSessionTimeout(4*time.Second))
	if p := observedLeader(ctx, t, obs, path); p != t1 {
		t.Fatalf("observer read leader token %v, want the first leader's %v", p, t1)
	}

	if err := zk3.SilenceQuorum(f); err != nil {
		t.Fatal(err)
	}
	healed := false
	defer func() {
		if !healed {
			_ = zk3.HealQuorum(f)
		}
	}()
	_ = first.Close()
	t2 := lead(t, candidate(t, session(t, onLeader), path)).Token()
	if p := observedLeader(ctx, t, obs, path); p != t2 {
		t.Fatalf("observer read leader token %v, want the second leader's %v", p, t2)
	}

	d.steer(func(a string) bool { return a == addrs[f] })
	eventually(t, "the lagging follower to refuse the observer's session for its newer zxid", func() bool {
		assertNotOlder(t, obs, path, t2)
		log, _ := os.ReadFile(zk3.LogPath(f))
		return strings.Contains(string(log), "client must try another server")
	})
	if err := zk3.HealQuorum(f); err != nil {
		t.Fatal(err)
	}
	healed = true
	eventually(t, "the observer to read the second leader's token on the caught-up follower", func() bool {
		return assertNotOlder(t, obs, path, t2)
	})
}

// observedLeader returns the leader's token as the observer reads it.
func observedLeader(ctx context.Context, t *testing.T, s *recipe.Session, path string) zxidfence.Token {
	t.Helper()
	p, err := recipe.Leader(ctx, s, path)
	if err != nil {
		t.Fatalf("observer's read of the leader: %v", err)
	}
	return p.Token
}

// assertNotOlder reads the leader through s once, briefly, fails the test
// if it reports a token older than want, and reports whether it read
// want.
func assertNotOlder(t *testing.T, s *recipe.Session, path string, want zxidfence.Token) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	p, err := recipe.Leader(ctx, s, path)
	if err != nil {
		return false
	}
	if p.Token < want {
		t.Fatalf("the observer reported leader token %v, older than %v it had read", p.Token, want)
	}
	return p.Token == want
}
