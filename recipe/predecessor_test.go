package recipe_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
)

// enterInOrder makes n candidates on s join the election one after the
// other (each znode created before the next candidate starts), so their
// sequence order is their index order.
func enterInOrder(t *testing.T, ctx context.Context, s *recipe.Session, raw *zk.Conn, path string, n int) ([]*recipe.Candidate, []<-chan campaignResult) {
	t.Helper()
	cands := make([]*recipe.Candidate, n)
	res := make([]<-chan campaignResult, n)
	for i := range cands {
		cands[i] = candidate(t, s, path, recipe.WithParticipantID("c"+string(rune('0'+i))))
		res[i] = campaignAsync(ctx, cands[i])
		eventually(t, "znode of candidate to appear", func() bool { return len(children(t, raw, path)) == i+1 })
	}
	return cands, res
}

func TestPredecessorLeavingIsNotPromotion(t *testing.T) {
	path := electionPath(t)
	s := session(t, zkc.ConnectString())
	raw := rawConn(t, zkc.ConnectString())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cands, res := enterInOrder(t, ctx, s, raw, path, 4)
	first := awaitResult(t, res[0], "the first candidate to lead")
	if first.err != nil {
		t.Fatal(first.err)
	}

	// Candidate 2 (predecessor of 3) leaves: 3 must go on waiting behind 1.
	if err := cands[1].Close(); err != nil {
		t.Fatalf("close candidate 2: %v", err)
	}
	eventually(t, "candidate 2's znode to go", func() bool { return len(children(t, raw, path)) == 3 })
	notYet(t, res[2], 500*time.Millisecond, "candidate 3 led while candidate 1 still leads")
	if cands[2].IsLeader() || !first.lead.Leading() {
		t.Fatal("leadership moved although the leader stayed")
	}

	// Now the leader leaves: 3 (not 4) takes over.
	if err := first.lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	r := awaitResult(t, res[2], "candidate 3 to lead after the leader left")
	if r.err != nil {
		t.Fatal(r.err)
	}
	notYet(t, res[3], 200*time.Millisecond, "candidate 4 led beside candidate 3")
}

func TestLeaderAndSuccessorLeavingAtOnce(t *testing.T) {
	path := electionPath(t)
	s := session(t, zkc.ConnectString())
	raw := rawConn(t, zkc.ConnectString())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cands, res := enterInOrder(t, ctx, s, raw, path, 4)
	first := awaitResult(t, res[0], "the first candidate to lead")
	kids := children(t, raw, path)
	sortBySeq(kids)

	// Someone deletes the leader's and its successor's znodes in one
	// transaction: candidate 3 must lead, and the two deleted candidates
	// re-enter behind, without any chase of deletes and re-creates.
	if _, err := raw.Multi(&zk.DeleteRequest{Path: path + "/" + kids[0], Version: -1},
		&zk.DeleteRequest{Path: path + "/" + kids[1], Version: -1}); err != nil {
		t.Fatalf("multi delete: %v", err)
	}
	if err := awaitEnd(t, first.lead, "the deleted leader to stop"); !errors.Is(err, recipe.ErrZnodeDeleted) {
		t.Fatalf("leader ended with %v, want ErrZnodeDeleted", err)
	}
	r := awaitResult(t, res[2], "candidate 3 to lead")
	if r.err != nil {
		t.Fatal(r.err)
	}
	eventually(t, "the two deleted candidates to re-enter", func() bool { return len(children(t, raw, path)) == 4 })
	_, before, err := raw.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	notYet(t, res[3], 500*time.Millisecond, "candidate 4 led beside candidate 3")
	_, after, err := raw.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Cversion != before.Cversion {
		t.Fatalf("children changed %d times while nobody left: a delete/re-create chase", after.Cversion-before.Cversion)
	}
	leaders := 0
	for _, c := range cands {
		if c.IsLeader() {
			leaders++
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders", leaders)
	}
}

func TestRandomLeavesNeverStrandACandidate(t *testing.T) {
	path := electionPath(t)
	s1, s2 := session(t, zkc.ConnectString()), session(t, zkc.ConnectString())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 24
	cands := make([]*recipe.Candidate, n)
	res := make([]<-chan campaignResult, n)
	for i := range cands {
		s := s1
		if i%3 == 0 {
			s = s2
		}
		cands[i] = candidate(t, s, path)
		res[i] = campaignAsync(ctx, cands[i])
	}
	// Close random candidates in concurrent bursts (leaders, predecessors
	// and their successors together), until one is left: at every step
	// the survivors must converge to exactly one leader.
	alive := make([]int, n)
	for i := range alive {
		alive[i] = i
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for len(alive) > 1 {
		k := min(len(alive)-1, 1+rng.IntN(4))
		rng.Shuffle(len(alive), func(i, j int) { alive[i], alive[j] = alive[j], alive[i] })
		var wg sync.WaitGroup
		for _, i := range alive[:k] {
			wg.Go(func() { _ = cands[i].Close() })
		}
		wg.Wait()
		alive = alive[k:]
		eventually(t, "exactly one leader among the survivors", func() bool {
			leaders := 0
			for _, i := range alive {
				if cands[i].IsLeader() {
					leaders++
				}
			}
			return leaders == 1
		})
	}
	r := awaitResult(t, res[alive[0]], "the last candidate's campaign")
	if r.err != nil {
		t.Fatal(r.err)
	}
}
