package recipe_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkelect/zkelect/recipe"
)

// wait is the generous upper bound of every wait in these tests: a bound
// on how long something may take, never the thing measured.
const wait = 20 * time.Second

// electionPath returns a fresh election path for the test.
func electionPath(t testing.TB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return "/recipe-test/" + name + "-" + hex.EncodeToString(b[:])
}

// session connects to servers with a 2s session timeout (plus opts) and
// closes the session at cleanup.
func session(t testing.TB, servers string, opts ...recipe.SessionOption) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	opts = append([]recipe.SessionOption{recipe.WithSessionTimeout(2 * time.Second)}, opts...)
	s, err := recipe.Connect(ctx, strings.Split(servers, ","), opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", servers, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// candidate creates a candidate and closes it at cleanup (before the
// session, since cleanups run last-in first-out).
func candidate(t testing.TB, s *recipe.Session, path string, opts ...recipe.CandidateOption) *recipe.Candidate {
	t.Helper()
	c, err := recipe.NewCandidate(s, path, opts...)
	if err != nil {
		t.Fatalf("new candidate on %s: %v", path, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// campaignResult is the outcome of a Campaign run in the background.
type campaignResult struct {
	lead *recipe.Leadership
	err  error
	at   time.Time
}

// campaignAsync runs Campaign in a goroutine; the result arrives on the
// returned channel (buffered), stamped with the time it returned.
func campaignAsync(ctx context.Context, c *recipe.Candidate) <-chan campaignResult {
	ch := make(chan campaignResult, 1)
	go func() {
		l, err := c.Campaign(ctx)
		ch <- campaignResult{lead: l, err: err, at: time.Now()}
	}()
	return ch
}

// lead campaigns and fails the test if c does not lead within wait.
func lead(t testing.TB, c *recipe.Candidate) *recipe.Leadership {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	l, err := c.Campaign(ctx)
	if err != nil {
		t.Fatalf("lead: %v", err)
	}
	return l
}

// awaitResult waits for a background Campaign.
func awaitResult(t testing.TB, ch <-chan campaignResult, what string) campaignResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatalf("timed out after %v waiting for %s", wait, what)
		return campaignResult{}
	}
}

// awaitEnd waits for a leadership to end and returns its reason.
func awaitEnd(t testing.TB, l *recipe.Leadership, what string) error {
	t.Helper()
	select {
	case <-l.Done():
		return l.Err()
	case <-time.After(wait):
		t.Fatalf("timed out after %v waiting for %s", wait, what)
		return nil
	}
}

// rawConn is a plain go-zookeeper client (an operator, another program).
func rawConn(t testing.TB, servers string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(strings.Split(servers, ","), 2*time.Second,
		zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatalf("raw connect: %v", err)
	}
	deadline := time.After(wait)
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("raw connect: no session within %v", wait)
		default:
		}
	}
	t.Cleanup(func() {
		conn.Close()
		for range events { // wait for go-zookeeper's goroutines to end
		}
	})
	return conn
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// children lists the candidate znodes under path.
func children(t testing.TB, conn *zk.Conn, path string) []string {
	t.Helper()
	ch, _, err := conn.Children(path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("children of %s: %v", path, err)
	}
	return ch
}

// eventually polls cond (a cheap read of state) until it holds or wait
// passes; what names the awaited condition.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", wait, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// notYet fails if ch delivers within d: used only to check that something
// does NOT happen, the bound being how long we look.
func notYet(t testing.TB, ch <-chan campaignResult, d time.Duration, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: got lead=%v err=%v", what, r.lead != nil, r.err)
	case <-time.After(d):
	}
}

// sortBySeq sorts child names by their 10-character sequence suffix
// (valid below the counter's wrap, which these tests never reach).
func sortBySeq(names []string) {
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a[len(a)-10:], b[len(b)-10:]) })
}
