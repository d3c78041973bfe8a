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
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/internal/znode"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestNewElectionLeadsWithoutAListing: 200 candidates of 200 elections
// that do not exist, on one session, with WithNewElection: each election's
// znode is created in the transaction of its candidate's, so each candidate
// leads on the first sequence number without listing its election (the
// session sends no getChildren at all), with its znode's czxid as token,
// and holds the watch on its znode: deleting it ends the leadership.
func TestNewElectionLeadsWithoutAListing(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	raw := rawConn(t, zkc.ConnectString())
	s := session(t, zkc.ConnectString(), recipe.WithMetrics(reg))
	base := electionPath(t)
	ensurePath(t, raw, base)
	const n = 200
	cs := make([]*recipe.Candidate, n)
	for i := range cs {
		cs[i] = candidate(t, s, fmt.Sprintf("%s/e%d", base, i), recipe.WithNewElection())
	}
	leads := campaignAll(t, cs)
	for i, l := range leads {
		_, st, err := raw.Get(l.Znode())
		if err != nil {
			t.Fatalf("read %s: %v", l.Znode(), err)
		}
		_, parent, err := raw.Exists(cs[i].Path())
		if err != nil {
			t.Fatalf("read %s: %v", cs[i].Path(), err)
		}
		if !strings.HasSuffix(l.Znode(), znode.FirstSuffix) || st.EphemeralOwner != s.ID() ||
			uint64(st.Czxid) != uint64(l.Token()) || parent.Czxid != st.Czxid {
			t.Fatalf("%s: owner 0x%x czxid %d (election's %d), token %d; want the first child, of session 0x%x, created with its election",
				l.Znode(), st.EphemeralOwner, st.Czxid, parent.Czxid, l.Token(), s.ID())
		}
	}
	for _, result := range []string{"ok", "error"} {
		if v := metricValue(t, reg, "zkelect_zookeeper_request_duration_seconds", map[string]string{"op": "get_children", "result": result}); v > 0 {
			t.Fatalf("the session listed an election %v times (%s), want none", v, result)
		}
	}
	for _, l := range leads[:5] {
		if err := raw.Delete(l.Znode(), -1); err != nil {
			t.Fatal(err)
		}
		if err := awaitEnd(t, l, "the leadership whose znode was deleted"); !errors.Is(err, recipe.ErrZnodeDeleted) {
			t.Fatalf("leadership of %s ended with %v, want ErrZnodeDeleted", l.Znode(), err)
		}
	}
}

// TestNewElectionThatExistsWaitsItsTurn: candidates with WithNewElection
// campaign at once on one session over 60 elections: a third do not
// exist, a third exist with a leader on another session, and a third
// exist empty after a candidate came and went (their next sequence number
// is not the first). The guesses that were wrong fail the transactions
// they ride in; each candidate must still end where a listing puts it:
// leading the new and the empty elections, queued behind the sitting
// leaders until they resign, then leading with a larger token.
func TestNewElectionThatExistsWaitsItsTurn(t *testing.T) {
	raw := rawConn(t, zkc.ConnectString())
	s, other := session(t, zkc.ConnectString()), session(t, zkc.ConnectString())
	base := electionPath(t)
	const n = 60
	cs := make([]*recipe.Candidate, n)
	holders := map[int]*recipe.Leadership{}
	for i := range cs {
		p := fmt.Sprintf("%s/e%d", base, i)
		switch i % 3 {
		case 1:
			holders[i] = lead(t, candidate(t, other, p))
		case 2:
			ensurePath(t, raw, p)
			name, err := raw.Create(p+"/gone-", nil, 0, zk.WorldACL(zk.PermAll))
			if err == nil {
				err = raw.Delete(name, -1)
			}
			if err != nil {
				t.Fatalf("a candidate that came and went under %s: %v", p, err)
			}
		}
		cs[i] = candidate(t, s, p, recipe.WithNewElection())
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	results := make([]<-chan campaignResult, n)
	for i, c := range cs {
		results[i] = campaignAsync(ctx, c)
	}
	for i := range cs {
		if i%3 == 1 {
			continue
		}
		r := awaitResult(t, results[i], fmt.Sprintf("the candidate of %s", cs[i].Path()))
		if r.err != nil {
			t.Fatalf("candidate of %s: %v", cs[i].Path(), r.err)
		}
		if first := strings.HasSuffix(r.lead.Znode(), znode.FirstSuffix); first != (i%3 == 0) {
			t.Fatalf("candidate of %s leads on %s: the first child only where the election was new", cs[i].Path(), r.lead.Znode())
		}
	}
	for i, h := range holders {
		if h.Err() != nil || cs[i].Leadership() != nil {
			t.Fatalf("election %s: holder ended (%v) or the newcomer leads beside it", cs[i].Path(), h.Err())
		}
		if kids := children(t, raw, cs[i].Path()); len(kids) != 2 {
			t.Fatalf("election %s holds %v, want the holder and the newcomer queued", cs[i].Path(), kids)
		}
		if err := h.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range holders {
		r := awaitResult(t, results[i], fmt.Sprintf("the newcomer of %s after the holder resigned", cs[i].Path()))
		if r.err != nil || r.lead.Token() <= h.Token() {
			t.Fatalf("newcomer of %s: %v, token %v after the holder's %v", cs[i].Path(), r.err, r.lead.Token(), h.Token())
		}
	}
}

// TestNewElectionLostReplyAdoptsItsZnode cuts the connection right after
// ZooKeeper applied a multi creating new elections with their candidates,
// dropping its reply: every candidate must find its own znode and lead on
// it, and no election may hold a second znode of ours.
func TestNewElectionLostReplyAdoptsItsZnode(t *testing.T) {
	raw := rawConn(t, zkc.ConnectString())
	base := electionPath(t)
	ensurePath(t, raw, base)
	const n = 40
	p := zkc.NewProxyT(t)
	s := session(t, p.ConnectString())
	cs := make([]*recipe.Candidate, n)
	for i := range cs {
		cs[i] = candidate(t, s, fmt.Sprintf("%s/e%d", base, i), recipe.WithNewElection())
	}
	fired := p.CutAfterRequest(testenv.OpMulti)
	results := make([]<-chan campaignResult, n)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	for i, c := range cs {
		results[i] = campaignAsync(ctx, c)
	}
	awaitCut(t, fired)
	for i, c := range cs {
		if r := awaitResult(t, results[i], "a campaign after the lost multi reply"); r.err != nil {
			t.Fatalf("campaign of %s after the lost multi reply: %v", c.Path(), r.err)
		}
		if kids := children(t, raw, c.Path()); len(kids) != 1 {
			t.Fatalf("election %s holds %v after the lost reply, want the one znode of its candidate", c.Path(), kids)
		}
	}
}

// TestNewElectionZnodeDeletedBeforeItsReplyIsNotLed: the candidates'
// multis and the reads behind them reach the server (each read arms the
// watch on the new znode), but the replies are held; an operator deletes
// every new znode; then the replies and the deletions' events arrive
// together. An event that comes before the create's reply has named the
// znode ours must not be lost: a candidate may lead on a deleted znode
// only until the deletion's event reaches it, never beside the next
// candidate untold. Found in review: the event was dropped and the
// candidate led on the read's stale stat until its session ended.
func TestNewElectionZnodeDeletedBeforeItsReplyIsNotLed(t *testing.T) {
	raw, base, p := rawConn(t, zkc.ConnectString()), electionPath(t), zkc.NewProxyT(t)
	ensurePath(t, raw, base)
	s := session(t, p.ConnectString())
	const n = 4 // as many multis as a session keeps in flight: all are sent while replies are held
	cs := make([]*recipe.Candidate, n)
	for i := range cs {
		cs[i] = candidate(t, s, fmt.Sprintf("%s/e%d", base, i), recipe.WithNewElection())
	}
	// Each reply and event is held for a third of the session from its
	// arrival at the proxy, and then by the partition below until Heal
	// lets them all through at once. A third: the client keeps its
	// connection through the hold.
	p.SetLatency(s.Timeout() / 3)
	t.Cleanup(p.Heal)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	results := make([]<-chan campaignResult, n)
	for i, c := range cs {
		results[i] = campaignAsync(ctx, c)
	}
	held := time.Now()
	var first []string // each election's new znode
	eventually(t, "every new znode created and watched", func() bool {
		first = first[:0]
		for _, c := range cs {
			if kids := children(t, raw, c.Path()); len(kids) == 1 {
				first = append(first, c.Path()+"/"+kids[0])
			}
		}
		w := serverWatches(t.Context(), t, zkc, base)[s.ID()]
		return len(first) == n && !slices.ContainsFunc(first, func(z string) bool { return !slices.Contains(w, z) })
	})
	for _, z := range first {
		if err := raw.Delete(z, -1); err != nil {
			t.Fatalf("delete %s: %v", z, err)
		}
	}
	eventually(t, "every deletion's watch fired", func() bool {
		w := serverWatches(t.Context(), t, zkc, base)[s.ID()]
		return !slices.ContainsFunc(first, func(z string) bool { return slices.Contains(w, z) })
	})
	p.Blackhole()
	if d := time.Since(held); d > s.Timeout()/3 {
		t.Logf("the first replies were let through after %v, before the deletions: the test proves less", d)
	}
	p.Heal()
	for i, c := range cs {
		r := awaitResult(t, results[i], "the campaign of "+c.Path())
		if r.err != nil {
			t.Fatalf("campaign of %s: %v", c.Path(), r.err)
		}
		if r.lead.Znode() != first[i] {
			continue // it saw the deletion first and made a new znode
		}
		// Led before the deletion's event arrived: the event must end it.
		if err := awaitEnd(t, r.lead, "the end of a leadership on "+first[i]+", deleted before its create's reply"); !errors.Is(err, recipe.ErrZnodeDeleted) {
			t.Fatalf("%s: the leadership on the deleted %s ended with %v, want ErrZnodeDeleted", c.Path(), first[i], err)
		}
	}
}
