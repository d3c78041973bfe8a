package zxidfence_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

func TestSQLStaleWriteLeavesValueAndSurvivesRestart(t *testing.T) {
	for _, d := range []zxidfence.Dialect{zxidfence.SQLite, zxidfence.Postgres} {
		t.Run(d.String(), func(t *testing.T) {
			ctx := testContext(t)
			db := openDialect(t, d)
			g := newSQLGuard(t, db, d)
			if err := g.Write(ctx, "k", zxidfence.At(20), []byte("B")); err != nil {
				t.Fatal(err)
			}
			err := g.Write(ctx, "k", zxidfence.At(10), []byte("A"))
			var stale *zxidfence.StaleTokenError
			if !errors.As(err, &stale) || stale.Highest != zxidfence.At(20) {
				t.Fatalf("stale write = %v; want *StaleTokenError with highest 20", err)
			}
			// A new guard on the same table (a restarted service) keeps the fence.
			restarted, err := zxidfence.NewSQL(db, d, zxidfence.WithTable(g.Table()))
			if err != nil {
				t.Fatal(err)
			}
			if err := restarted.Write(ctx, "k", zxidfence.At(10), []byte("A")); !errors.Is(err, zxidfence.ErrStaleToken) {
				t.Fatalf("stale write after restart = %v; want ErrStaleToken", err)
			}
			f, v, err := restarted.Read(ctx, "k")
			if err != nil || f != zxidfence.At(20) || string(v) != "B" {
				t.Fatalf("Read = %s, %q, %v; want token 20 and B's value", f, v, err)
			}
		})
	}
}

func TestSQLDoRunsCallerStatementsInTheFencedTransaction(t *testing.T) {
	for _, d := range []zxidfence.Dialect{zxidfence.SQLite, zxidfence.Postgres} {
		t.Run(d.String(), func(t *testing.T) {
			ctx := testContext(t)
			db := openDialect(t, d)
			g := newSQLGuard(t, db, d)
			logTable := fmt.Sprintf("log_%d", tables.Add(1))
			if _, err := db.ExecContext(ctx, "CREATE TABLE "+logTable+" (msg TEXT)"); err != nil {
				t.Fatal(err)
			}
			insert := placeholders(d, "INSERT INTO "+logTable+" VALUES (?)")
			write := func(tok zxidfence.Token, msg string, fail error) error {
				return g.Do(ctx, "k", zxidfence.At(tok), func(ctx context.Context) error {
					if _, err := zxidfence.TxFromContext(ctx).ExecContext(ctx, insert, msg); err != nil {
						return err
					}
					return fail
				})
			}
			if err := write(5, "kept", nil); err != nil {
				t.Fatal(err)
			}
			boom := errors.New("boom")
			if err := write(9, "rolled back", boom); !errors.Is(err, boom) {
				t.Fatalf("Do = %v; want fn's error", err)
			}
			expectHighest(ctx, t, g, "k", zxidfence.At(5)) // the failed transaction recorded nothing
			if err := write(4, "stale", nil); !errors.Is(err, zxidfence.ErrStaleToken) {
				t.Fatalf("stale Do = %v", err)
			}
			var n int
			var msg string
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*), MIN(msg) FROM "+logTable).Scan(&n, &msg); err != nil {
				t.Fatal(err)
			}
			if n != 1 || msg != "kept" {
				t.Fatalf("log holds %d rows (first %q); want only the admitted, committed one", n, msg)
			}
			if zxidfence.TxFromContext(ctx) != nil {
				t.Fatal("TxFromContext outside Do must be nil")
			}
		})
	}
}

func TestSQLRefusesTokensBeyondBigint(t *testing.T) {
	g := newSQLGuard(t, openSQLite(t), zxidfence.SQLite)
	ctx := testContext(t)
	for _, f := range []zxidfence.Fence{
		zxidfence.At(math.MaxInt64 + 1),
		{Generation: math.MaxInt64 + 1, Token: 1},
	} {
		if err := g.Write(ctx, "k", f, nil); !errors.Is(err, zxidfence.ErrOutOfRange) {
			t.Errorf("Write(%s) = %v; want ErrOutOfRange", f, err)
		}
	}
	if err := g.Write(ctx, "k", zxidfence.At(math.MaxInt64), nil); err != nil {
		t.Fatalf("Write(2^63-1) = %v", err)
	}
}

func TestNewSQLValidatesConfig(t *testing.T) {
	db := openSQLite(t)
	for _, c := range []struct {
		d     zxidfence.Dialect
		table string
	}{
		{zxidfence.Dialect(0), "ok"},
		{zxidfence.SQLite, "bad-name"},
		{zxidfence.SQLite, "x; DROP TABLE y"},
		{zxidfence.SQLite, "1abc"},
		{zxidfence.Postgres, ""},
	} {
		if _, err := zxidfence.NewSQL(db, c.d, zxidfence.WithTable(c.table)); err == nil {
			t.Errorf("NewSQL(%s, %q) succeeded; want an error", c.d, c.table)
		}
	}
	if _, err := zxidfence.NewSQL(nil, zxidfence.SQLite); err == nil {
		t.Error("NewSQL(nil) succeeded")
	}
}

// A panic in fn, recovered by the caller (as net/http does for handlers
// behind Middleware), must not leak the fenced transaction: before the fix
// it kept its connection and row lock (SQLite: the database's write lock),
// and every later Do on the key ran into its deadline.
func TestSQLPanickingFnRollsBackAndRepanics(t *testing.T) {
	for _, d := range []zxidfence.Dialect{zxidfence.SQLite, zxidfence.Postgres} {
		t.Run(d.String(), func(t *testing.T) {
			ctx := testContext(t)
			db := openDialect(t, d)
			g := newSQLGuard(t, db, d)
			if err := g.Do(ctx, "p", zxidfence.At(5), nil); err != nil {
				t.Fatal(err)
			}
			got := func() (r any) {
				defer func() { r = recover() }()
				_ = g.Do(ctx, "p", zxidfence.At(6), func(context.Context) error { panic("bug in fn") })
				return nil
			}()
			if got != "bug in fn" {
				t.Fatalf("recovered %v; want fn's panic to reach the caller", got)
			}
			if n := db.Stats().InUse; n != 0 {
				t.Fatalf("%d connections still in use after the panic; want the transaction rolled back", n)
			}
			expectHighest(ctx, t, g, "p", zxidfence.At(5)) // the panicking write recorded nothing
			short, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := g.Do(short, "p", zxidfence.At(7), nil); err != nil {
				t.Fatalf("Do on the key after a recovered panic: %v", err)
			}
		})
	}
}
