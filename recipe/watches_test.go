package recipe_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// These tests read the server's watch table (four-letter words wchc and
// mntr) to prove the recipe sets no more watches than it needs.

// serverWatches returns, per session id, the paths under prefix (all paths
// for "") on which the session holds a data or exists watch, from the
// server's "wchc" reply (which leaves child watches out), sorted.
func serverWatches(ctx context.Context, t *testing.T, c *testenv.Cluster, prefix string) map[int64][]string {
	t.Helper()
	all, err := c.Wchc(ctx, 0)
	if err != nil {
		t.Fatalf("wchc: %v", err)
	}
	out := map[int64][]string{}
	for session, ps := range all {
		for _, p := range ps {
			if prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/") {
				out[session] = append(out[session], p)
			}
		}
	}
	return out
}

// childWatchCount returns how many child watches the server holds, in all
// sessions: "wchc" lists only data and exists watches, "mntr"'s
// zk_watch_count counts both kinds.
// The two replies are read until the total is the same before and after
// the list, so a watch set meanwhile is not taken for a child watch.
func childWatchCount(ctx context.Context, t *testing.T, c *testenv.Cluster) int {
	t.Helper()
	for {
		before := mntrValue(ctx, t, c, "zk_watch_count")
		data := 0
		for _, ps := range serverWatches(ctx, t, c, "") {
			data += len(ps)
		}
		if after := mntrValue(ctx, t, c, "zk_watch_count"); after == before {
			return int(after) - data
		}
		if ctx.Err() != nil {
			t.Fatalf("watch count never stable: %v", ctx.Err())
		}
	}
}

// mntrValue returns one numeric line of the server's "mntr" reply.
func mntrValue(ctx context.Context, t *testing.T, c *testenv.Cluster, key string) int64 {
	t.Helper()
	n, err := c.Mntr(ctx, 0, key)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// noClientWatches fails the test if go-zookeeper holds a watch channel on
// conn (the session sets and keeps its watches itself).
func noClientWatches(t *testing.T, conn *zk.Conn) {
	t.Helper()
	if n := clientWatchCount(t, conn); n != 0 {
		t.Fatalf("go-zookeeper holds %d watch channels, want 0", n)
	}
}

// clientWatchCount returns how many watch channels go-zookeeper holds on
// conn.
func clientWatchCount(t *testing.T, conn *zk.Conn) int {
	t.Helper()
	n, err := testenv.ClientWatchers(conn)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// await polls cond (which reads external state that sends no
// notification, such as the server's watch table) until it returns "" or
// the deadline passes, and fails with the last reason.
func await(t *testing.T, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(obsWait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v: %s", what, obsWait, why)
		}
		<-tick.C
	}
}

// campaigner is a candidate campaigning in the background.
type campaigner struct {
	cand *recipe.Candidate
	won  chan *recipe.Leadership // receives the leadership once, if won
}

// campaign creates a candidate with id on s and starts its Campaign; the
// candidate is closed at cleanup (or earlier by the test).
func campaign(t *testing.T, s *recipe.Session, path, id string, opts ...recipe.CandidateOption) *campaigner {
	t.Helper()
	c, err := recipe.NewCandidate(s, path, append([]recipe.CandidateOption{recipe.WithParticipantID(id)}, opts...)...)
	if err != nil {
		t.Fatalf("NewCandidate %s: %v", id, err)
	}
	cp := &campaigner{cand: c, won: make(chan *recipe.Leadership, 1)}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	wg.Go(func() {
		if l, err := c.Campaign(ctx); err == nil {
			cp.won <- l
		}
	})
	t.Cleanup(func() {
		cancel()
		if err := c.Close(); err != nil {
			t.Errorf("close candidate %s: %v", id, err)
		}
		wg.Wait()
	})
	return cp
}

// awaitWin waits for the campaigner to lead.
func (c *campaigner) awaitWin(t *testing.T) *recipe.Leadership {
	t.Helper()
	select {
	case l := <-c.won:
		return l
	case <-time.After(obsWait):
		t.Fatalf("candidate %s did not lead within %v", c.cand.ID(), obsWait)
	}
	return nil
}

// awaitParticipants waits until the election's participants have exactly
// the ids given (in any order) and returns them in election order.
func awaitParticipants(t *testing.T, s *recipe.Session, path string, ids ...string) []recipe.Participant {
	t.Helper()
	want := slices.Sorted(slices.Values(ids))
	var ps []recipe.Participant
	await(t, "participants "+strings.Join(want, ","), func() string {
		var err error
		ps, err = recipe.Participants(t.Context(), s, path)
		if err != nil {
			return err.Error()
		}
		got := make([]string, len(ps))
		for i, p := range ps {
			got[i] = p.ID
		}
		if slices.Sort(got); !slices.Equal(got, want) {
			return fmt.Sprintf("have %v", got)
		}
		return ""
	})
	return ps
}

func TestNoHerdEffectOnePredecessorWatchEach(t *testing.T) {
	const n = 50
	ctx := t.Context()
	path := "/watches/herd"
	sessions := make([]*recipe.Session, n) // one each, so the watch table tells candidates apart
	ids := make([]string, n)
	for i := range sessions {
		sessions[i] = obsSession(t, zkc.ConnectString())
		ids[i] = fmt.Sprintf("c%02d", i)
	}
	cands := map[string]*campaigner{}
	for i, s := range sessions {
		cands[ids[i]] = campaign(t, s, path, ids[i])
	}
	ps := awaitParticipants(t, sessions[0], path, ids...)
	leader := cands[ps[0].ID].awaitWin(t)

	// Every candidate's session watches its own znode and, unless it
	// leads, its predecessor: no other znode, and no child watch exists (on
	// the election path or anywhere else).
	want := map[int64][]string{}
	for i, p := range ps {
		watched := []string{p.Znode}
		if i > 0 {
			watched = append(watched, ps[i-1].Znode)
		}
		slices.Sort(watched)
		want[p.SessionID] = watched
	}
	await(t, "one predecessor watch per candidate", func() string {
		got := serverWatches(ctx, t, zkc, path)
		for _, w := range got {
			slices.Sort(w)
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("server watches %v, want %v", got, want)
		}
		if c := childWatchCount(ctx, t, zkc); c != 0 {
			return fmt.Sprintf("server holds %d child watches", c)
		}
		return ""
	})

	// Someone else deletes the leader's znode: the server notifies the
	// leader (its own-znode watch) and its successor, no one else.
	raw := obsRaw(t, zkc.ConnectString())
	deletedBefore := mntrValue(ctx, t, zkc, "zk_sum_node_deleted_watch_count")
	childrenBefore := mntrValue(ctx, t, zkc, "zk_sum_node_children_watch_count")
	if err := raw.Delete(ps[0].Znode, -1); err != nil {
		t.Fatalf("delete leader znode: %v", err)
	}
	if got := mntrValue(ctx, t, zkc, "zk_sum_node_deleted_watch_count") - deletedBefore; got != 2 {
		t.Errorf("deleting the leader's znode triggered %d watches, want 2 (leader, successor)", got)
	}
	if got := mntrValue(ctx, t, zkc, "zk_sum_node_children_watch_count") - childrenBefore; got != 0 {
		t.Errorf("deleting the leader's znode triggered %d child watches, want 0", got)
	}
	select {
	case <-leader.Done():
	case <-time.After(obsWait):
		t.Fatal("leadership did not end after its znode was deleted")
	}
	cands[ps[1].ID].awaitWin(t)
	for _, p := range ps[2:] {
		if cands[p.ID].cand.IsLeader() {
			t.Errorf("candidate %s leads beside the successor", p.ID)
		}
	}
}

func TestWatchesBoundedUnderChurn(t *testing.T) {
	const (
		start = 50
		ops   = 2000
		check = 200 // sample the watch tables every this many operations
	)
	ctx := t.Context()
	path := "/watches/churn"
	s := obsSession(t, zkc.ConnectString())
	r := rand.New(rand.NewPCG(7, 11))

	var live []*campaigner
	next := 0
	join := func() {
		live = append(live, campaign(t, s, path, fmt.Sprintf("j%04d", next)))
		next++
	}
	join()
	live[0].awaitWin(t)
	for range start - 1 {
		join()
	}
	for op := 1; op <= ops; op++ {
		if r.IntN(2) == 0 || len(live) < 3 {
			join()
		} else {
			i := 1 + r.IntN(len(live)-1) // never the first joined, which leads
			if err := live[i].cand.Close(); err != nil {
				t.Fatalf("op %d: close %s: %v", op, live[i].cand.ID(), err)
			}
			live = slices.Delete(live, i, i+1)
		}
		if op%check == 0 {
			checkWatchBound(ctx, t, s, path, len(live))
		}
	}
	if !live[0].cand.IsLeader() {
		t.Fatal("the first candidate lost leadership during the churn of others")
	}
}

// checkWatchBound asserts that the session holds at most one watch per live
// candidate, on the server and in go-zookeeper, and none on the path.
func checkWatchBound(ctx context.Context, t *testing.T, s *recipe.Session, path string, live int) {
	t.Helper()
	got := serverWatches(ctx, t, zkc, path)[s.ID()]
	if len(got) > live || slices.Contains(got, path) {
		t.Fatalf("server holds %d watches for %d candidates (parent watched: %v)", len(got), live, slices.Contains(got, path))
	}
	// Candidates that just joined or lost their predecessor set their data
	// watches in the background: wait for those before counting the rest.
	await(t, "no child watch", func() string {
		if c := childWatchCount(ctx, t, zkc); c != 0 {
			return fmt.Sprintf("server holds %d child watches", c)
		}
		return ""
	})
	// A round trip on the connection delivers every notification the
	// server sent before it, so fired watches are gone from the client.
	if _, _, err := s.Conn().Exists(path); err != nil {
		t.Fatalf("exists %s: %v", path, err)
	}
	if n := clientWatchCount(t, s.Conn()); n > live {
		t.Fatalf("client holds %d watch channels for %d candidates", n, live)
	}
	t.Logf("%d candidates: %d server watches, %d client watch channels", live, len(got), clientWatchCount(t, s.Conn()))
}
