package zxidfence_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/zkelect/zkelect/testenv"
	"github.com/zkelect/zkelect/zxidfence"
)

// setupInstances and setupRounds: every round starts this many processes
// that create one new table at the same moment, as the instances of a
// service do when they are started together. In PostgreSQL every
// setupRawEvery-th one runs the bare Schema statement instead, as a
// migration tool or an older release would, without the advisory lock.
const (
	setupInstances = 6
	setupRounds    = 4
	setupRawEvery  = 3
)

// TestCreateTableFromConcurrentProcesses starts several real processes
// that call CreateTable on the same new table at once, in PostgreSQL
// (where CREATE TABLE IF NOT EXISTS alone fails in all but one with 23505
// on pg_type) and in SQLite opened without a busy timeout (where it alone
// fails with SQLITE_BUSY), and checks that every one succeeds and the
// table then works. In PostgreSQL some processes race them with the bare
// statement (no lock): CreateTable must succeed beside those too.
func TestCreateTableFromConcurrentProcesses(t *testing.T) {
	for _, d := range []zxidfence.Dialect{zxidfence.Postgres, zxidfence.SQLite} {
		t.Run(d.String(), func(t *testing.T) {
			for round := range setupRounds {
				table := fmt.Sprintf("setup_%d", tables.Add(1))
				driver, dsn := "pgx", pgDSN
				if d == zxidfence.SQLite {
					// No busy timeout and the default rollback journal: the
					// least forgiving way an application may open SQLite.
					driver, dsn = "sqlite", "file:"+filepath.Join(t.TempDir(), "setup.db")
				}
				createConcurrently(t, round, driver, dsn, table)
				db := openDB(t, driver, dsn)
				g, err := zxidfence.NewSQL(db, d, zxidfence.WithTable(table))
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Write(testContext(t), "k", zxidfence.At(7), []byte("v")); err != nil {
					t.Fatalf("round %d: write to the table the processes created: %v", round, err)
				}
			}
		})
	}
}

// createConcurrently runs setupInstances create-table children against
// table, starts them together and fails t unless each reports CREATED.
func createConcurrently(t *testing.T, round int, driver, dsn, table string) {
	t.Helper()
	ctx := testContext(t)
	env := []string{envChild + "=create-table", envSetupDriver + "=" + driver, envSetupDSN + "=" + dsn, envSetupTable + "=" + table}
	procs := make([]*testenv.Process, setupInstances)
	raw := func(i int) bool { return driver == "pgx" && i%setupRawEvery == setupRawEvery-1 }
	for i := range procs {
		e := env
		if raw(i) {
			e = append(slices.Clip(env), envSetupRaw+"=1")
		}
		procs[i] = testenv.StartProcess(t, os.Args[0], []string{"-test.run=^$"}, e)
	}
	for i, p := range procs {
		if _, err := p.WaitLine(ctx, prefix("READY")); err != nil {
			t.Fatalf("round %d: waiting for instance %d to connect: %v", round, i, err)
		}
	}
	for _, p := range procs {
		if err := p.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range procs {
		line, err := p.WaitLine(ctx, func(l string) bool { return l == "CREATED" || strings.HasPrefix(l, "FATAL") })
		if err != nil {
			t.Fatalf("round %d: waiting for instance %d's CreateTable: %v", round, i, err)
		}
		switch {
		case raw(i):
			t.Logf("round %d: instance %d, without the lock: %s", round, i, line)
		case line != "CREATED":
			t.Errorf("round %d: instance %d of %d creating %s at once: %s", round, i, setupInstances, table, line)
		}
	}
}
