package zxidfence_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// Shared servers for the package's tests: one ZooKeeper and one PostgreSQL.
var (
	zkc   *testenv.Cluster
	pgDSN string
)

func TestMain(m *testing.M) {
	switch os.Getenv(envChild) {
	case "paused-leader":
		os.Exit(pausedLeaderChild()) // this process plays leader A
	case "create-table":
		os.Exit(createTableChild()) // this process is a service instance starting up
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	pg, err := testenv.StartPostgresServer(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pg.Close()
	pgDSN = pg.DSN()
	// The PostgreSQL server's log reader was started above, so Main's leak
	// check (which ignores goroutines present when it starts) ignores it.
	return testenv.Main(m, testenv.Options{Servers: 1}, &zkc)
}

// testContext returns a context bounded by a generous minute, cancelled at
// the end of the test.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// sqlGuards opens a fresh table in SQLite and in PostgreSQL for one test
// and returns a guard on each, named by dialect.
func sqlGuards(t testing.TB, opts ...zxidfence.Option) map[string]*zxidfence.SQL {
	return map[string]*zxidfence.SQL{
		"sqlite":   newSQLGuard(t, openSQLite(t), zxidfence.SQLite, opts...),
		"postgres": newSQLGuard(t, openPostgres(t), zxidfence.Postgres, opts...),
	}
}

func openSQLite(t testing.TB) *sql.DB { return openDB(t, "sqlite", sqliteDSN(t)) }

// sqliteDSN names a new database file for the test, with a busy timeout so
// that concurrent writers (and processes) wait for each other.
func sqliteDSN(t testing.TB) string {
	return "file:" + filepath.Join(t.TempDir(), "fence.db") + "?_pragma=busy_timeout(20000)&_pragma=journal_mode(wal)&_txlock=immediate"
}

func openPostgres(t testing.TB) *sql.DB { return openDB(t, "pgx", pgDSN) }

func openDB(t testing.TB, driver, dsn string) *sql.DB {
	db, err := sqlOpen(driver, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// tables numbers the tables tests create in the shared PostgreSQL.
var tables atomic.Int64

// newSQLGuard creates a guard on a table unique to the test.
func newSQLGuard(t testing.TB, db *sql.DB, d zxidfence.Dialect, opts ...zxidfence.Option) *zxidfence.SQL {
	table := fmt.Sprintf("fence_%d", tables.Add(1))
	g, err := zxidfence.NewSQL(db, d, append([]zxidfence.Option{zxidfence.WithTable(table)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CreateTable(testContext(t)); err != nil {
		t.Fatal(err)
	}
	return g
}

func sqlOpen(driver, dsn string) (*sql.DB, error) { return sql.Open(driver, dsn) }
