package recipe_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// campaignAll campaigns every candidate at once and fails the test on any
// error; it returns the leaderships in the candidates' order.
func campaignAll(t *testing.T, cs []*recipe.Candidate) []*recipe.Leadership {
	t.Helper()
	var wg sync.WaitGroup
	leads := make([]*recipe.Leadership, len(cs))
	errs := make([]error, len(cs))
	for i, c := range cs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			leads[i], errs[i] = c.Campaign(ctx)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("candidate %d on %s: %v", i, cs[i].Path(), err)
		}
	}
	return leads
}

// TestBatchedCreatesLeadEachElection has 300 candidates of 300 existing
// elections on one session campaign at once with WithBatchedCreates: each
// leads on its own znode, which holds its participant id and whose czxid
// is its token.
func TestBatchedCreatesLeadEachElection(t *testing.T) {
	s := session(t, zkc.ConnectString())
	conn := rawConn(t, zkc.ConnectString())
	base := electionPath(t)
	const n = 300
	ensureZnode(t, conn, "/recipe-test")
	ensureZnode(t, conn, base)
	cs := make([]*recipe.Candidate, n)
	for i := range cs {
		p := fmt.Sprintf("%s/e%d", base, i)
		ensureZnode(t, conn, p)
		cs[i] = candidate(t, s, p, recipe.WithBatchedCreates(), recipe.WithParticipantID(fmt.Sprintf("p%d", i)))
	}
	for i, l := range campaignAll(t, cs) {
		data, st, err := conn.Get(l.Znode())
		if err != nil {
			t.Fatalf("read %s: %v", l.Znode(), err)
		}
		if string(data) != fmt.Sprintf("p%d", i) || st.EphemeralOwner != s.ID() || uint64(st.Czxid) != uint64(l.Token()) {
			t.Fatalf("%s: data %q owner 0x%x czxid %d, want p%d, session 0x%x, token %d",
				l.Znode(), data, st.EphemeralOwner, st.Czxid, i, s.ID(), l.Token())
		}
	}
}

// TestBatchedCreatesFallBackForMissingParents: elections whose paths do
// not exist fail their batch (ZooKeeper applies none of a failed multi);
// every candidate then creates alone, parents included, and leads.
func TestBatchedCreatesFallBackForMissingParents(t *testing.T) {
	s := session(t, zkc.ConnectString())
	base := electionPath(t)
	cs := make([]*recipe.Candidate, 100)
	for i := range cs {
		cs[i] = candidate(t, s, fmt.Sprintf("%s/e%d", base, i), recipe.WithBatchedCreates())
	}
	campaignAll(t, cs)
}

// TestBatchedCreatesOfOneElectionHaveDistinctTokens: znodes created in one
// multi share its zxid, so a batch never carries two creates of one
// election: 20 candidates of one election on one session, campaigning at
// once, get 20 distinct czxids, in the order of their sequence numbers.
func TestBatchedCreatesOfOneElectionHaveDistinctTokens(t *testing.T) {
	s := session(t, zkc.ConnectString())
	conn := rawConn(t, zkc.ConnectString())
	path := electionPath(t)
	const n = 20
	for range n {
		c := candidate(t, s, path, recipe.WithBatchedCreates())
		ctx, cancel := context.WithCancel(t.Context())
		t.Cleanup(cancel)
		campaignAsync(ctx, c)
	}
	var names []string
	eventually(t, fmt.Sprintf("%d candidate znodes under %s", n, path), func() bool {
		names, _, _ = conn.Children(path)
		return len(names) == n
	})
	sortBySeq(names)
	var last int64
	for _, name := range names {
		_, st, err := conn.Get(path + "/" + name)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if st.Czxid <= last {
			t.Fatalf("%s: czxid %d not above the previous znode's %d: created in one transaction", name, st.Czxid, last)
		}
		last = st.Czxid
	}
}

// ensureZnode creates a persistent znode unless it exists.
func ensureZnode(t *testing.T, conn *zk.Conn, p string) {
	t.Helper()
	if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
		t.Fatalf("create %s: %v", p, err)
	}
}

// TestBatchedCreatesLostReplyAdoptsEachZnode cuts the connection right
// after ZooKeeper applied a multi of batched creates, dropping its reply:
// every candidate of the batch must find its own znode (by its protected
// prefix, owned by the session) and lead on it, never create a second one.
func TestBatchedCreatesLostReplyAdoptsEachZnode(t *testing.T) {
	raw := rawConn(t, zkc.ConnectString())
	base := electionPath(t)
	const n = 40
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s/e%d", base, i)
		ensurePath(t, raw, paths[i])
	}
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	cs := make([]*recipe.Candidate, n)
	for i := range cs {
		cs[i] = candidate(t, s, paths[i], recipe.WithBatchedCreates())
	}
	fired := p.CutAfterRequest(testenv.OpMulti)
	leads := make(chan error, n)
	for _, c := range cs {
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			_, err := c.Campaign(ctx)
			leads <- err
		}()
	}
	awaitCut(t, fired)
	for range n {
		if err := <-leads; err != nil {
			t.Fatalf("campaign after the lost multi reply: %v", err)
		}
	}
	for i, c := range cs {
		if kids := children(t, raw, paths[i]); len(kids) != 1 {
			t.Fatalf("election %s holds %v after the lost reply, want the one znode of its candidate", paths[i], kids)
		}
		if l := c.Leadership(); l == nil {
			t.Fatalf("candidate of %s does not lead", paths[i])
		}
	}
}
