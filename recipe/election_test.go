package recipe_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

func TestOneLeaderAmongManyIsTheLowestSequence(t *testing.T) {
	path := electionPath(t)
	s1, s2 := session(t, zkc.ConnectString()), session(t, zkc.ConnectString())
	raw := rawConn(t, zkc.ConnectString())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const n = 8
	cands := make([]*recipe.Candidate, n)
	results := make([]<-chan campaignResult, n)
	for i := range cands {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		cands[i] = candidate(t, s, path)
		results[i] = campaignAsync(ctx, cands[i])
	}
	// A candidate leads two round trips after its create: wait for every
	// znode, so that the first leader is checked against all of them.
	eventually(t, "every candidate's znode", func() bool { return len(children(t, raw, path)) == n })
	var prev zxidfence.Token
	for round := 0; round < n; round++ {
		// Exactly one candidate leads, and it owns the lowest znode.
		var leader = -1
		eventually(t, "a leader", func() bool {
			for i, c := range cands {
				if c != nil && c.IsLeader() {
					leader = i
					return true
				}
			}
			return false
		})
		r := awaitResult(t, results[leader], "the leader's Campaign")
		if r.err != nil {
			t.Fatalf("round %d: campaign: %v", round, r.err)
		}
		for i, c := range cands {
			if c != nil && i != leader && c.IsLeader() {
				t.Fatalf("round %d: candidates %d and %d both lead", round, leader, i)
			}
		}
		kids := children(t, raw, path)
		if len(kids) != n-round {
			t.Fatalf("round %d: %d znodes, want %d: %v", round, len(kids), n-round, kids)
		}
		slices.SortFunc(kids, func(a, b string) int { return strings.Compare(a[len(a)-10:], b[len(b)-10:]) })
		if want := path + "/" + kids[0]; r.lead.Znode() != want {
			t.Fatalf("round %d: leader holds %s, lowest is %s", round, r.lead.Znode(), want)
		}
		if r.lead.Token() <= prev {
			t.Fatalf("round %d: token %v not above previous %v", round, r.lead.Token(), prev)
		}
		prev = r.lead.Token()
		// The leader leaves; the next one takes over.
		if err := r.lead.Resign(ctx); err != nil {
			t.Fatalf("resign: %v", err)
		}
		if !errors.Is(r.lead.Err(), recipe.ErrResigned) {
			t.Fatalf("reason %v, want ErrResigned", r.lead.Err())
		}
		cands[leader] = nil
	}
}

func TestTokensGrowAcrossResignAndReelection(t *testing.T) {
	path := electionPath(t)
	s := session(t, zkc.ConnectString())
	a, b := candidate(t, s, path), candidate(t, s, path)
	var prev zxidfence.Token
	for i := 0; i < 5; i++ {
		for _, c := range []*recipe.Candidate{a, b} {
			l := lead(t, c)
			if l.Token() <= prev {
				t.Fatalf("token %v after %v", l.Token(), prev)
			}
			prev = l.Token()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			if err := l.Resign(ctx); err != nil {
				t.Fatalf("resign: %v", err)
			}
			cancel()
		}
	}
	_ = time.Second
}
