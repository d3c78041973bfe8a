package recipe_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// ensurePath creates path (and parents) with a raw client, so that only the
// candidate's own create goes through a proxy fault armed for creates.
func ensurePath(t testing.TB, raw *zk.Conn, path string) {
	t.Helper()
	p := ""
	for _, part := range splitPath(path) {
		p += "/" + part
		if _, err := raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

func splitPath(p string) []string {
	var parts []string
	start := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			parts = append(parts, p[start:i])
			start = i + 1
		}
	}
	return parts
}

// awaitCut waits for an armed proxy cut to fire.
func awaitCut(t testing.TB, fired <-chan struct{}) {
	t.Helper()
	select {
	case <-fired:
	case <-time.After(wait):
		t.Fatalf("the proxy never cut after the create (waited %v)", wait)
	}
}

// lostCreate is a candidate behind a proxy that will drop the reply to its
// next create2 after the server applied it.
type lostCreate struct {
	path  string
	raw   *zk.Conn // a direct connection, for looking at the election path
	sess  *recipe.Session
	cand  *recipe.Candidate
	fired <-chan struct{} // closed when the proxy cut the connection
}

func newLostCreate(t *testing.T) lostCreate {
	t.Helper()
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	ensurePath(t, raw, path)
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, path)
	return lostCreate{path: path, raw: raw, sess: s, cand: c, fired: p.CutAfterRequest(testenv.OpCreate2)}
}

func TestCreateReplyLostAdoptsOwnZnodeWithoutDuplicate(t *testing.T) {
	lc := newLostCreate(t)
	path, raw, s, c, fired := lc.path, lc.raw, lc.sess, lc.cand, lc.fired
	l := lead(t, c)
	awaitCut(t, fired)
	kids, parent, err := raw.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || path+"/"+kids[0] != l.Znode() {
		t.Fatalf("znodes %v, leader on %s: want exactly the adopted one", kids, l.Znode())
	}
	if parent.Cversion != 1 {
		t.Fatalf("children changed %d times: a duplicate was created (and deleted)", parent.Cversion)
	}
	_, stat, err := raw.Exists(l.Znode())
	if err != nil || stat.EphemeralOwner != s.ID() {
		t.Fatalf("leader znode owner %x (err %v), session %x", stat.EphemeralOwner, err, s.ID())
	}
}

func TestCampaignCancelledDuringLostCreateLeavesNoZnode(t *testing.T) {
	lc := newLostCreate(t)
	path, raw, s, c, fired := lc.path, lc.raw, lc.sess, lc.cand, lc.fired
	ctx, cancel := context.WithCancel(context.Background())
	res := campaignAsync(ctx, c)
	awaitCut(t, fired)
	cancel()
	r := awaitResult(t, res, "the cancelled Campaign to return")
	if r.err == nil {
		// Won in the same instant as the cancel: the leadership is the
		// caller's to give back.
		t.Logf("campaign returned a leadership before noticing the cancel")
		if err := r.lead.Resign(context.Background()); err != nil {
			t.Fatal(err)
		}
	} else if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("campaign error %v, want context.Canceled", r.err)
	}
	eventually(t, "the candidate's znode to be deleted", func() bool { return len(children(t, raw, path)) == 0 })
	time.Sleep(s.Timeout()) // look again later: nothing may reappear
	if kids := children(t, raw, path); len(kids) != 0 {
		t.Fatalf("znodes reappeared: %v", kids)
	}
}

func TestCloseDuringLostCreateLeavesNoZnode(t *testing.T) {
	lc := newLostCreate(t)
	path, raw, s, c, fired := lc.path, lc.raw, lc.sess, lc.cand, lc.fired
	res := campaignAsync(context.Background(), c)
	awaitCut(t, fired)
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if kids := children(t, raw, path); len(kids) != 0 {
		t.Fatalf("znodes left after Close returned: %v", kids)
	}
	if r := awaitResult(t, res, "Campaign to return after Close"); !errors.Is(r.err, recipe.ErrClosed) {
		t.Fatalf("campaign error %v, want ErrClosed", r.err)
	}
	time.Sleep(s.Timeout()) // later, too
	if kids := children(t, raw, path); len(kids) != 0 {
		t.Fatalf("znodes appeared after Close: %v", kids)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestSessionExpiryEndsLeadershipAndReentersWithNewZnode(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString())
	other := session(t, zkc.ConnectString())
	// Expiry on demand closes the leader's connection first; under the
	// default policy that alone ends leadership (ErrSuspended). Tolerating
	// the disconnect, the leader learns of the expiry at its reconnect.
	c := candidate(t, s, path, recipe.WithConnectionLossPolicy(recipe.TolerateSuspend(500*time.Millisecond)))
	l := lead(t, c)
	follower := candidate(t, other, path)
	fres := campaignAsync(context.Background(), follower)
	eventually(t, "the follower's znode", func() bool { return len(children(t, raw, path)) == 2 })

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := testenv.ExpireConn(ctx, zkc.Addrs(), s.Conn()); err != nil {
		t.Fatalf("expire: %v", err)
	}
	if err := awaitEnd(t, l, "leadership to end on expiry"); !errors.Is(err, recipe.ErrSessionExpired) {
		t.Fatalf("leadership ended with %v, want ErrSessionExpired", err)
	}
	r := awaitResult(t, fres, "the follower to lead")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.lead.Token() <= l.Token() {
		t.Fatalf("new leader's token %v not above %v", r.lead.Token(), l.Token())
	}
	// The expired candidate re-entered with a new znode on its new session.
	eventually(t, "the expired candidate's new znode", func() bool { return len(children(t, raw, path)) == 2 })
	kids := children(t, raw, path)
	sortBySeq(kids)
	_, stat, err := raw.Exists(path + "/" + kids[1])
	if err != nil || stat.EphemeralOwner != s.ID() || s.ID() == 0 {
		t.Fatalf("re-entered znode owner %x (err %v), session now %x", stat.EphemeralOwner, err, s.ID())
	}
	if err := r.lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	l2 := lead(t, c)
	if l2.Token() <= r.lead.Token() {
		t.Fatalf("token %v after %v", l2.Token(), r.lead.Token())
	}
}

func TestLeaderZnodeDeletedBySomeoneElseEndsLeadership(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString())
	c := candidate(t, s, path)
	l := lead(t, c)
	if err := raw.Delete(l.Znode(), -1); err != nil {
		t.Fatal(err)
	}
	if err := awaitEnd(t, l, "leadership to end when its znode is deleted"); !errors.Is(err, recipe.ErrZnodeDeleted) {
		t.Fatalf("ended with %v, want ErrZnodeDeleted", err)
	}
	// Still campaigning: it re-enters and, alone, leads again.
	l2 := lead(t, c)
	if l2.Znode() == l.Znode() || l2.Token() <= l.Token() {
		t.Fatalf("second term on %s token %v, first on %s token %v", l2.Znode(), l2.Token(), l.Znode(), l.Token())
	}
}

func TestConnectionLossSuspendsThenRegainsWithSameToken(t *testing.T) {
	path := electionPath(t)
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, path)
	l := lead(t, c)
	id := s.ID()
	p.Cut()
	if err := awaitEnd(t, l, "leadership to end on connection loss"); !errors.Is(err, recipe.ErrSuspended) {
		t.Fatalf("ended with %v, want ErrSuspended", err)
	}
	l2 := lead(t, c)
	if s.ID() != id {
		t.Fatalf("session changed %x -> %x; the cut should not expire it", id, s.ID())
	}
	if l2 == l || l2.Token() != l.Token() || l2.Znode() != l.Znode() {
		t.Fatalf("regained leadership token %v znode %s, before %v %s", l2.Token(), l2.Znode(), l.Token(), l.Znode())
	}
}

func TestResignDuringConnectionLossDeletesAfterReconnect(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString(), recipe.WithSessionTimeout(4*time.Second))
	c := candidate(t, s, path, recipe.WithConnectionLossPolicy(recipe.TolerateSuspend(time.Second)))
	l := lead(t, c)
	p.Blackhole()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err := l.Resign(ctx)
	cancel()
	if !errors.Is(err, recipe.ErrCleanupIncomplete) {
		t.Fatalf("resign while cut off returned %v, want ErrCleanupIncomplete", err)
	}
	if l.Leading() {
		t.Fatal("still leading after Resign returned")
	}
	p.Heal()
	eventually(t, "the resigned znode to be deleted after the reconnect", func() bool { return len(children(t, raw, path)) == 0 })
}

// TestCloseGivingUpOnALostCreateStillDeletesItsZnode loses the reply of a
// create ZooKeeper applied (the connection is cut right after it) and
// closes the candidate with a close timeout too short to reconnect and
// find the znode's name. The znode belongs to a session that lives on, so
// nothing would ever delete it, and it would sort in the election with no
// candidate behind it (a probe found shards leaderless for good this way).
// It must be deleted in the background, Close's error notwithstanding.
func TestCloseGivingUpOnALostCreateStillDeletesItsZnode(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	ensurePath(t, raw, path)
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	c := candidate(t, s, path, recipe.WithCloseTimeout(time.Millisecond))
	fired := p.CutAfterRequest(testenv.OpCreate2)
	campaignAsync(context.Background(), c)
	awaitCut(t, fired)
	if err := c.Close(); !errors.Is(err, recipe.ErrCleanupIncomplete) {
		t.Fatalf("Close: %v, want ErrCleanupIncomplete (it gave up before reconnecting)", err)
	}
	eventually(t, "the znode of the lost create deleted while its session lives on", func() bool {
		return len(children(t, raw, path)) == 0
	})
	if s.ID() == 0 {
		t.Fatal("the session ended: the server deleted the znode, not the candidate")
	}
}
