package recipe_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// replyGate is a go-zookeeper dialer whose connections count the requests
// written to the server by op code and, while held, keep the server's
// replies from the client.
type replyGate struct {
	mu      sync.Mutex
	written map[int32]int
	held    chan struct{} // nil when not held; closed to release
}

func newReplyGate() *replyGate { return &replyGate{written: map[int32]int{}} }

// hold keeps every reply read from now on from the client until release.
func (g *replyGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = make(chan struct{})
}

// release delivers the held replies and stops holding (idempotent).
func (g *replyGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

// count returns how many requests with op code op were written.
func (g *replyGate) count(op int32) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.written[op]
}

func (g *replyGate) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, g: g}, nil
}

// gatedConn relies on go-zookeeper (and the session) writing one frame per
// Write, as the recipe's own wire tracking does.
type gatedConn struct {
	net.Conn
	g          *replyGate
	wroteFirst bool // the connect request has no op code
}

func (c *gatedConn) Write(b []byte) (int, error) {
	first := !c.wroteFirst
	c.wroteFirst = true
	// The session's own reads of /zookeeper/config (it follows the
	// ensemble's membership) are not the candidate's requests.
	if !first && len(b) >= 12 && int(binary.BigEndian.Uint32(b)) == len(b)-4 && !bytes.Contains(b, []byte("/zookeeper/config")) {
		c.g.mu.Lock()
		c.g.written[int32(binary.BigEndian.Uint32(b[8:]))]++
		c.g.mu.Unlock()
	}
	return c.Conn.Write(b)
}

// Read holds bytes that arrive while the gate is held.
func (c *gatedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.g.mu.Lock()
	held := c.g.held
	c.g.mu.Unlock()
	if held != nil {
		<-held
	}
	return n, err
}

// TestCreateCarriesTheStatAndTheListingFollowsAtOnce holds back every reply
// while a candidate enters a fresh election: its create (create2, whose
// reply carries the stat) and the listing of the children must both be sent
// before any reply comes, saving the round trip between them, and nothing
// else may be sent before the replies. Released, the candidate leads with
// the czxid of its znode as the token.
func TestCreateCarriesTheStatAndTheListingFollowsAtOnce(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	ensurePath(t, raw, path)
	g := newReplyGate()
	s := session(t, zkc.ConnectString(), recipe.WithDialer(g.dial))
	c := candidate(t, s, path)
	t.Cleanup(g.release) // before the candidate and session close (cleanups run last-in first-out)

	g.hold()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res := campaignAsync(ctx, c)
	eventually(t, "the create and the listing to be sent with no reply read", func() bool {
		return g.count(testenv.OpCreate2) == 1 && g.count(testenv.OpGetChildren2) == 1
	})
	ops := map[string][2]int{
		"create":  {g.count(testenv.OpCreate), 0},
		"getData": {g.count(testenv.OpGetData), 0},
		"exists":  {g.count(testenv.OpExists), 0},
	}
	g.release()
	for op, n := range ops {
		if n[0] != n[1] {
			t.Errorf("%d %s requests sent before any reply, want %d", n[0], op, n[1])
		}
	}
	r := awaitResult(t, res, "the candidate to lead")
	if r.err != nil {
		t.Fatal(r.err)
	}
	l := r.lead
	_, stat, err := raw.Exists(l.Znode())
	if err != nil {
		t.Fatalf("read the leader's znode: %v", err)
	}
	if int64(l.Token()) != stat.Czxid || stat.EphemeralOwner != s.ID() || l.SessionID() != s.ID() {
		t.Fatalf("token %d, owner %x, leadership session %x; want czxid %d, session %x",
			l.Token(), stat.EphemeralOwner, l.SessionID(), stat.Czxid, s.ID())
	}
	if err := raw.Delete(l.Znode(), -1); err != nil {
		t.Fatal(err)
	}
	if err := awaitEnd(t, l, "the leadership to end with its znode"); !errors.Is(err, recipe.ErrZnodeDeleted) {
		t.Fatalf("leadership ended with %v, want ErrZnodeDeleted", err)
	}
}
