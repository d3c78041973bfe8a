package zxidfence_test

// The scenario of the whole package (tests against real ZooKeeper): leader
// A, a child process, is paused (SIGSTOP) past its session timeout; B is
// elected with a larger token and writes; A resumes (SIGCONT) and at once
// writes with its old token, as a real paused process would. Every guard
// kind must refuse A, keep B's value and name both tokens.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// Environment of the child process that plays leader A.
const (
	envChild       = "ZXIDFENCE_TEST_CHILD" // "paused-leader" or "create-table" runs that child instead of the tests
	envZooKeeper   = "ZXIDFENCE_TEST_ZK"
	envElection    = "ZXIDFENCE_TEST_ELECTION"
	envZKTarget    = "ZXIDFENCE_TEST_ZK_TARGET"
	envHTTP        = "ZXIDFENCE_TEST_HTTP"
	envSQLite      = "ZXIDFENCE_TEST_SQLITE"
	envSQLiteTable = "ZXIDFENCE_TEST_SQLITE_TABLE"
	envPostgres    = "ZXIDFENCE_TEST_PG"
	envPGTable     = "ZXIDFENCE_TEST_PG_TABLE"
)

// sessionTimeout is the session timeout both leaders request.
const sessionTimeout = time.Second

// guardKinds are the resources A and B both write, one per guard kind.
var guardKinds = []string{"http", "sqlite", "postgres", "zookeeper"}

func TestLeaderResumedAfterPauseIsFenced(t *testing.T) {
	runPausedLeader(t, false)
}

// TestLeaderResumedAsSuccessorWritesNeverLandsAfter resumes A the moment B
// is elected, so that A's write races B's first write: whichever order they
// reach a resource in, B's value is the one that stays.
func TestLeaderResumedAsSuccessorWritesNeverLandsAfter(t *testing.T) {
	runPausedLeader(t, true)
}

func runPausedLeader(t *testing.T, race bool) {
	ctx := testContext(t)
	res := newScenarioResources(t)
	a := testenv.StartProcess(t, os.Args[0], []string{"-test.run=^$"}, res.childEnv())
	t1 := awaitToken(ctx, t, a, "LEADER ")
	if _, err := a.WaitLine(ctx, prefix("READY")); err != nil {
		t.Fatalf("waiting for A's first writes: %v", err)
	}
	res.expectAll(ctx, t, zxidfence.At(t1), "A-before")

	bSession, bCandidate := joinElection(ctx, t, res.election)
	campaign := make(chan campaignResult, 1)
	go func() {
		lead, err := bCandidate.Campaign(ctx)
		campaign <- campaignResult{lead, err}
	}()
	if err := a.Pause(); err != nil {
		t.Fatal(err)
	}
	// B can only win once A's session has expired: A has been paused past
	// its session timeout by then.
	b := <-campaign
	if b.err != nil {
		t.Fatalf("B's campaign: %v", b.err)
	}
	t2 := b.lead.Token()
	if t2 <= t1 {
		t.Fatalf("B's token %v is not above A's %v", t2, t1)
	}
	if race {
		if err := a.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	res.writeAll(ctx, t, bSession, b.lead)
	if !race {
		if err := a.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	for range guardKinds {
		line, err := a.WaitLine(ctx, prefix("RESULT "))
		if err != nil {
			t.Fatalf("waiting for A's write after resume: %v", err)
		}
		checkResumedWrite(t, line, t1, t2, race)
	}
	res.expectAll(ctx, t, zxidfence.At(t2), "B")
}

type campaignResult struct {
	lead *recipe.Leadership
	err  error
}

// checkResumedWrite checks A's report of its write after the resume:
// "RESULT <kind> <outcome> presented=<token> highest=<token> err=<text>".
// Without the race A must have been refused as stale with both tokens
// named; with it A may also have landed first (B then overwrote it, which
// expectAll checks) or been refused inside ZooKeeper before B wrote.
func checkResumedWrite(t *testing.T, line string, t1, t2 zxidfence.Token, race bool) {
	t.Helper()
	var kind, outcome, presented, highest string
	if _, err := fmt.Sscanf(line, "RESULT %s %s presented=%s highest=%s", &kind, &outcome, &presented, &highest); err != nil {
		t.Fatalf("unparsable report %q: %v", line, err)
	}
	t.Logf("A after resume: %s", line)
	switch {
	case outcome == "stale" && presented == t1.Decimal() && highest == t2.Decimal():
	case race && (outcome == "accepted" || outcome == "notleader"):
	default:
		t.Errorf("%s: A's write with %v after resume: %s; want stale naming %v and %v", kind, t1, line, t1, t2)
	}
}

func awaitToken(ctx context.Context, t *testing.T, p *testenv.Process, pre string) zxidfence.Token {
	t.Helper()
	line, err := p.WaitLine(ctx, prefix(pre))
	if err != nil {
		t.Fatalf("waiting for %q: %v", pre, err)
	}
	tok, err := zxidfence.ParseToken(strings.TrimPrefix(line, pre))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func prefix(p string) func(string) bool {
	return func(line string) bool { return strings.HasPrefix(line, p) }
}

func joinElection(ctx context.Context, t *testing.T, path string) (*recipe.Session, *recipe.Candidate) {
	t.Helper()
	s, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(sessionTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c, err := recipe.NewCandidate(s, path, recipe.WithParticipantID("B"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return s, c
}
