package zxidfence_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

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
		v := req.Header.Get("X-Value")
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
