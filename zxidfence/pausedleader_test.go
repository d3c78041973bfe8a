package zxidfence_test

// The scenario of the whole package (tests against real ZooKeeper): leader
// A, a child process, is paused (SIGSTOP) past its session timeout; B is
// elected with a larger token and writes; A resumes (SIGCONT) and at once
// writes with its old token, as a real paused process would. Every guard
// kind must refuse A, keep B's value and name both tokens.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// Environment of the child process that plays leader A.
const (
	envChild       = "ZXIDFENCE_TEST_CHILD" // "paused-leader" runs the child instead of the tests
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

// scenarioResources are one resource per guard kind, shared by A (through
// the environment) and B (in the test process).
type scenarioResources struct {
	election string
	zkTarget string
	srv      *httptest.Server
	value    atomic.Pointer[string] // the HTTP resource, behind a Memory guard
	memory   *zxidfence.Memory
	sqlite   *zxidfence.SQL
	sqliteDS string
	postgres *zxidfence.SQL
	zkReader *zxidfence.ZooKeeper
}

func newScenarioResources(t *testing.T) *scenarioResources {
	conn := connectZK(t)
	dir := freshZnode(t, conn)
	r := &scenarioResources{
		election: dir + "/election",
		zkTarget: dir + "/resource",
		memory:   zxidfence.NewMemory(),
		sqliteDS: sqliteDSN(t),
		zkReader: newZooKeeper(t, conn),
	}
	r.sqlite = newSQLGuard(t, openDB(t, "sqlite", r.sqliteDS), zxidfence.SQLite)
	r.postgres = newSQLGuard(t, openPostgres(t), zxidfence.Postgres)
	r.value.Store(new(string))
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var b strings.Builder
		_, _ = fmt.Fprint(&b, req.Header.Get("X-Value"))
		v := b.String()
		r.value.Store(&v)
		w.WriteHeader(http.StatusNoContent)
	})
	r.srv = httptest.NewServer(zxidfence.Middleware(r.memory, func(*http.Request) (string, error) { return "resource", nil })(h))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *scenarioResources) childEnv() []string {
	return []string{
		envChild + "=paused-leader",
		envZooKeeper + "=" + zkc.ConnectString(),
		envElection + "=" + r.election,
		envZKTarget + "=" + r.zkTarget,
		envHTTP + "=" + r.srv.URL,
		envSQLite + "=" + r.sqliteDS,
		envSQLiteTable + "=" + r.sqlite.Table(),
		envPostgres + "=" + pgDSN,
		envPGTable + "=" + r.postgres.Table(),
	}
}

// writeAll writes "B" to every resource as leader lead.
func (r *scenarioResources) writeAll(ctx context.Context, t *testing.T, s *recipe.Session, lead *recipe.Leadership) {
	t.Helper()
	z, err := zxidfence.NewZooKeeper(s.Conn())
	if err != nil {
		t.Fatal(err)
	}
	w := writer{
		http:      r.srv.URL,
		sqlite:    r.sqlite,
		postgres:  r.postgres,
		zookeeper: z,
		zkTarget:  r.zkTarget,
		leader:    zxidfence.LeaderOf(lead, 0),
	}
	for _, kind := range guardKinds {
		if err := w.write(ctx, kind, "B"); err != nil {
			t.Fatalf("B's write to %s: %v", kind, err)
		}
	}
}

// expectAll checks that every resource holds value under fence f.
func (r *scenarioResources) expectAll(ctx context.Context, t *testing.T, f zxidfence.Fence, value string) {
	t.Helper()
	check := func(kind string, got zxidfence.Fence, v string, err error) {
		if err != nil || got != f || v != value {
			t.Errorf("%s holds %q under %s (err %v); want %q under %s", kind, v, got, err, value, f)
		}
	}
	h, err := r.memory.Highest(ctx, "resource")
	check("http", h, *r.value.Load(), err)
	for kind, g := range map[string]*zxidfence.SQL{"sqlite": r.sqlite, "postgres": r.postgres} {
		got, v, err := g.Read(ctx, "resource")
		check(kind, got, string(v), err)
	}
	got, v, err := r.zkReader.Read(ctx, r.zkTarget)
	check("zookeeper", got, string(v), err)
}

// writer writes one value to each kind of resource as one leader.
type writer struct {
	http      string
	sqlite    *zxidfence.SQL
	postgres  *zxidfence.SQL
	zookeeper *zxidfence.ZooKeeper
	zkTarget  string
	leader    zxidfence.Leader
}

func (w writer) write(ctx context.Context, kind, value string) error {
	switch kind {
	case "http":
		return w.writeHTTP(ctx, value)
	case "sqlite":
		return w.sqlite.Write(ctx, "resource", w.leader.Fence, []byte(value))
	case "postgres":
		return w.postgres.Write(ctx, "resource", w.leader.Fence, []byte(value))
	case "zookeeper":
		return w.zookeeper.Write(ctx, w.zkTarget, w.leader, []byte(value))
	}
	return fmt.Errorf("unknown guard kind %q", kind)
}

func (w writer) writeHTTP(ctx context.Context, value string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, w.http, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Value", value)
	client := &http.Client{Transport: &zxidfence.Transport{
		Fence: func(context.Context) (zxidfence.Fence, error) { return w.leader.Fence, nil },
	}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := zxidfence.ResponseError(resp); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// pausedLeaderChild is leader A: it wins the election, writes "A-before"
// everywhere, prints READY and waits for SIGCONT; then, without looking at
// its leadership (a paused process has not noticed anything yet), it writes
// "A-after" with its old token to every resource and reports each outcome.
func pausedLeaderChild() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := runPausedLeaderChild(ctx); err != nil {
		fmt.Println("FATAL", err)
		return 1
	}
	return 0
}

func runPausedLeaderChild(ctx context.Context) error {
	s, err := recipe.Connect(ctx, strings.Split(os.Getenv(envZooKeeper), ","), recipe.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := recipe.NewCandidate(s, os.Getenv(envElection), recipe.WithParticipantID("A"))
	if err != nil {
		return err
	}
	defer c.Close()
	lead, err := c.Campaign(ctx)
	if err != nil {
		return err
	}
	fmt.Println("LEADER", lead.Token().Decimal())
	w, err := childWriter(s, lead)
	if err != nil {
		return err
	}
	for _, kind := range guardKinds {
		if err := w.write(ctx, kind, "A-before"); err != nil {
			return fmt.Errorf("write to %s: %w", kind, err)
		}
	}
	resumed := make(chan os.Signal, 1)
	signal.Notify(resumed, syscall.SIGCONT)
	defer signal.Stop(resumed)
	fmt.Println("READY")
	<-resumed
	for _, kind := range guardKinds {
		fmt.Println(report(kind, w.leader.Fence, w.writeRetrying(ctx, kind, "A-after")))
	}
	return nil
}

func childWriter(s *recipe.Session, lead *recipe.Leadership) (writer, error) {
	sqlite, err1 := childSQL("sqlite", os.Getenv(envSQLite), zxidfence.SQLite, os.Getenv(envSQLiteTable))
	postgres, err2 := childSQL("pgx", os.Getenv(envPostgres), zxidfence.Postgres, os.Getenv(envPGTable))
	z, err3 := zxidfence.NewZooKeeper(s.Conn())
	if err := errors.Join(err1, err2, err3); err != nil {
		return writer{}, err
	}
	return writer{
		http:      os.Getenv(envHTTP),
		sqlite:    sqlite,
		postgres:  postgres,
		zookeeper: z,
		zkTarget:  os.Getenv(envZKTarget),
		leader:    zxidfence.LeaderOf(lead, 0),
	}, nil
}

func childSQL(driver, dsn string, d zxidfence.Dialect, table string) (*zxidfence.SQL, error) {
	db, err := sqlOpen(driver, dsn)
	if err != nil {
		return nil, err
	}
	return zxidfence.NewSQL(db, d, zxidfence.WithTable(table))
}

// writeRetrying is write, retried while the failure is the ZooKeeper
// connection catching up with the expired session (no answer yet about the
// write itself), as a leader's write loop would.
func (w writer) writeRetrying(ctx context.Context, kind, value string) error {
	retry := time.NewTicker(50 * time.Millisecond)
	defer retry.Stop()
	for {
		err := w.write(ctx, kind, value)
		if kind != "zookeeper" || err == nil || rejectedOutcome(err) != "" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-retry.C:
		}
	}
}

func rejectedOutcome(err error) string {
	switch {
	case errors.Is(err, zxidfence.ErrStaleToken):
		return "stale"
	case errors.Is(err, zxidfence.ErrNotLeader):
		return "notleader"
	}
	return ""
}

// report formats one outcome as the line checkResumedWrite parses.
func report(kind string, presented zxidfence.Fence, err error) string {
	outcome, highest := "accepted", "-"
	var stale *zxidfence.StaleTokenError
	if errors.As(err, &stale) {
		highest = stale.Highest.Token.Decimal()
	}
	if err != nil {
		outcome = rejectedOutcome(err)
		if outcome == "" {
			outcome = "error"
		}
	}
	msg := "-"
	if err != nil {
		msg = strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return fmt.Sprintf("RESULT %s %s presented=%s highest=%s err=%s", kind, outcome, presented.Token.Decimal(), highest, msg)
}
