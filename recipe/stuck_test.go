package recipe_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/recipe"
)

// TestWarnsOnceBehindAPersistentZnode: a persistent sequential znode first
// in an election (an operator's lock-0000000000) holds it forever, since no
// session's end deletes it. The candidate waiting behind it once waited
// without a word; now it logs a warning naming the znode, once however
// often it reads it again, and leaves the znode alone.
func TestWarnsOnceBehindAPersistentZnode(t *testing.T) {
	path := electionPath(t)
	raw := rawConn(t, zkc.ConnectString())
	for _, p := range []string{"/recipe-test", path} {
		if _, err := raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	blocker, err := raw.Create(path+"/lock-", []byte("operator"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	s := session(t, zkc.ConnectString(), recipe.WithLogger(zerolog.New(&logs)))
	c := candidate(t, s, path)
	ctx, cancel := context.WithCancel(context.Background())
	res := campaignAsync(ctx, c)
	warnings := func() int { return strings.Count(logs.String(), `"predecessor":"`+blocker+`"`) }
	poll(t, "a warning naming the persistent znode", func() bool { return warnings() > 0 })
	for range 2 { // a data change makes the candidate read its predecessor again
		if _, err := raw.Set(blocker, []byte("changed"), -1); err != nil {
			t.Fatal(err)
		}
		poll(t, "the candidate to watch its predecessor again", func() bool { return watches(t, s.ID(), blocker) })
	}
	if n := warnings(); n != 1 {
		t.Errorf("warned %d times about %s, want once", n, blocker)
	}
	cancel()
	if r := awaitResult(t, res, "Campaign to end with its ctx"); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Campaign behind a persistent znode: %v, %v; want ctx's error", r.lead, r.err)
	}
	if ok, _, err := raw.Exists(blocker); err != nil || !ok {
		t.Errorf("the persistent znode was deleted (exists %v, %v)", ok, err)
	}
}

// poll checks cond every 10ms until it holds, failing after wait.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", wait, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watches reports whether session id holds a data watch on path, as the
// server's wchc lists it.
func watches(t *testing.T, id int64, path string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	w, err := zkc.Wchc(ctx, 0)
	if err != nil {
		t.Fatalf("wchc: %v", err)
	}
	return slices.Contains(w[id], path)
}
