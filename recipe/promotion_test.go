package recipe_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// Safety of promotion without a round trip (DESIGN.md "Promotion without a
// round trip"): a standby whose last listing showed its predecessor lowest
// leads on that predecessor's deletion; every case where that proof does not
// hold still ends with exactly the right leader.

// TestStandbyWatchesItsOwnZnodeWhileWaiting: a standby behind the lowest
// znode holds a watch on its own znode before it is promoted, so once
// promoted it learns at once of its znode's deletion.
func TestStandbyWatchesItsOwnZnodeWhileWaiting(t *testing.T) {
	path := electionPath(t)
	leader := lead(t, candidate(t, session(t, zkc.ConnectString()), path))
	s := session(t, zkc.ConnectString())
	standby := candidate(t, s, path)
	res := campaignAsync(context.Background(), standby)
	raw := rawConn(t, zkc.ConnectString())
	var own string
	eventually(t, "the standby to watch its predecessor and its own znode", func() bool {
		kids := children(t, raw, path)
		if len(kids) != 2 {
			return false
		}
		sortBySeq(kids)
		own = path + "/" + kids[1]
		w := serverWatches(context.Background(), t, zkc, path)[s.ID()]
		return slices.Contains(w, leader.Znode()) && slices.Contains(w, own)
	})
	if err := leader.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := awaitResult(t, res, "the standby to lead")
	if r.err != nil || r.lead.Znode() != own {
		t.Fatalf("standby led %v (err %v), want on its znode %s", r.lead, r.err, own)
	}
	if err := raw.Delete(own, -1); err != nil {
		t.Fatal(err)
	}
	if err := awaitEnd(t, r.lead, "the promoted leader to see its znode deleted"); !errors.Is(err, recipe.ErrZnodeDeleted) {
		t.Fatalf("leadership ended with %v, want ErrZnodeDeleted", err)
	}
}

// TestPromotionAcrossStraddlingSequences: the standby's predecessor is the
// lowest, but the live suffixes straddle half the counter's circle (they
// order by czxid): on the predecessor's deletion the standby leads, and a
// znode created later with a "lower" suffix never does.
func TestPromotionAcrossStraddlingSequences(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	for _, p := range []string{"/recipe-test", path} {
		if _, err := raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	hand := func(name string) string {
		t.Helper()
		p, err := raw.Create(path+"/"+name, []byte(name), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return p
	}
	first := hand("n_-1073741824")
	s := session(t, zkc.ConnectString())
	standby := candidate(t, s, path)
	res := campaignAsync(context.Background(), standby)
	eventually(t, "the standby's znode", func() bool { return len(children(t, raw, path)) == 2 })
	hand("n_1073741824") // created after the standby: behind it in czxid order
	eventually(t, "the standby to watch the first znode", func() bool {
		return slices.Contains(serverWatches(context.Background(), t, zkc, path)[s.ID()], first)
	})
	notYet(t, res, 200*time.Millisecond, "the standby led behind a live first znode")
	if err := raw.Delete(first, -1); err != nil {
		t.Fatal(err)
	}
	r := awaitResult(t, res, "the standby to lead once the first znode left")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if l, err := recipe.Leader(context.Background(), s, path); err != nil || l.Znode != r.lead.Znode() {
		t.Fatalf("Leader = %+v, %v; want the standby's znode %s", l, err, r.lead.Znode())
	}
}

// TestNewSessionBetweenListingAndDeletionLists: the standby's session
// expires between its listing (predecessor lowest) and the predecessor's
// deletion; it must not lead on its old znode, which is gone, but re-enter
// with a new znode and lead on that.
func TestNewSessionBetweenListingAndDeletionLists(t *testing.T) {
	path := electionPath(t)
	leader := lead(t, candidate(t, session(t, zkc.ConnectString()), path))
	proxy := zkc.NewProxyT(t)
	s := session(t, proxy.ConnectString())
	standby := candidate(t, s, path)
	res := campaignAsync(context.Background(), standby)
	raw := rawConn(t, zkc.ConnectString())
	var old string
	eventually(t, "the standby to watch the leader", func() bool {
		kids := children(t, raw, path)
		sortBySeq(kids)
		if len(kids) == 2 {
			old = path + "/" + kids[1]
		}
		return len(kids) == 2 && slices.Contains(serverWatches(context.Background(), t, zkc, path)[s.ID()], leader.Znode())
	})
	oldSession := s.ID()
	proxy.Blackhole()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := testenv.ExpireConn(ctx, zkc.Addrs(), s.Conn()); err != nil {
		t.Fatalf("expire the standby's session: %v", err)
	}
	if err := leader.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Heal()
	r := awaitResult(t, res, "the standby to lead on a new session")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.lead.Znode() == old || r.lead.SessionID() == oldSession {
		t.Fatalf("standby leads on %s of session %x, want a new znode of a new session (old: %s of %x)",
			r.lead.Znode(), r.lead.SessionID(), old, oldSession)
	}
	if _, stat, err := raw.Exists(r.lead.Znode()); err != nil || stat == nil || stat.EphemeralOwner != r.lead.SessionID() {
		t.Fatalf("leader's znode %s: stat %+v, err %v; want it owned by session %x", r.lead.Znode(), stat, err, r.lead.SessionID())
	}
}

// TestHerdOneNotificationPerFailoverAtHundred: 100 candidates, each on its
// own session; every failover's deletion is watched by one other session
// only (the successor), whatever the promotion path.
func TestHerdOneNotificationPerFailoverAtHundred(t *testing.T) {
	const n = 100
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	results := make([]<-chan campaignResult, n)
	sessions := make([]*recipe.Session, n)
	for i := range n {
		sessions[i] = session(t, zkc.ConnectString())
		results[i] = campaignAsync(context.Background(), candidate(t, sessions[i], path, recipe.WithParticipantID(fmt.Sprint("c", i))))
		eventually(t, "candidate's znode", func() bool { return len(children(t, raw, path)) == i+1 })
	}
	for i := range 3 {
		r := awaitResult(t, results[i], fmt.Sprintf("candidate %d to lead", i))
		if r.err != nil {
			t.Fatal(r.err)
		}
		eventually(t, "every standby to wait on its predecessor", func() bool {
			total := 0
			for _, ps := range serverWatches(context.Background(), t, zkc, path) {
				total += len(ps)
			}
			// The leader watches its own znode; each standby its
			// predecessor and its own znode.
			return total == 1+2*(n-1-i)
		})
		watchers := 0
		for id, ps := range serverWatches(context.Background(), t, zkc, path) {
			if id != sessions[i].ID() && slices.Contains(ps, r.lead.Znode()) {
				watchers++
			}
		}
		if watchers != 1 {
			t.Fatalf("failover %d: %d other sessions watch the leader's znode, want 1 (the successor)", i, watchers)
		}
		if err := r.lead.Resign(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
