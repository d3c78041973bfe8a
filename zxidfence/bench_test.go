package zxidfence_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/zxidfence"
)

// Each guard's accepted writes per second beside the same write without the
// guard, in the same run: go test -run '^$' -bench . ./zxidfence/
// Every guarded write presents a higher token than the last, so all are
// accepted. The payload is 64 bytes and changes on every write, guarded or
// not (SQLite skips the disk write of an unchanged row, which would flatter
// a constant baseline).

// nextValue returns a 64-byte payload that differs from the previous one.
func nextValue(buf []byte, i uint64) []byte {
	binary.BigEndian.PutUint64(buf, i)
	return buf
}

func reportWrites(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

func BenchmarkMemory(b *testing.B) {
	ctx := context.Background()
	cell := make([]byte, 64)
	b.Run("guarded", func(b *testing.B) {
		g := zxidfence.NewMemory()
		tok := zxidfence.Token(0)
		for b.Loop() {
			tok++
			if err := g.Do(ctx, "k", zxidfence.At(tok), func(context.Context) error { nextValue(cell, uint64(tok)); return nil }); err != nil {
				b.Fatal(err)
			}
		}
		reportWrites(b)
	})
	b.Run("unguarded", func(b *testing.B) {
		var mu sync.Mutex
		i := uint64(0)
		for b.Loop() {
			i++
			mu.Lock()
			nextValue(cell, i)
			mu.Unlock()
		}
		reportWrites(b)
	})
}

func BenchmarkSQLite(b *testing.B) { benchSQL(b, zxidfence.SQLite) }

func BenchmarkPostgres(b *testing.B) { benchSQL(b, zxidfence.Postgres) }

func benchSQL(b *testing.B, d zxidfence.Dialect) {
	ctx := context.Background()
	db := openDialect(b, d)
	buf := make([]byte, 64)
	b.Run("guarded", func(b *testing.B) {
		g := newSQLGuard(b, db, d)
		tok := zxidfence.Token(0)
		for b.Loop() {
			tok++
			if err := g.Write(ctx, "k", zxidfence.At(tok), nextValue(buf, uint64(tok))); err != nil {
				b.Fatal(err)
			}
		}
		reportWrites(b)
	})
	b.Run("unguarded", func(b *testing.B) {
		table := fmt.Sprintf("plain_%d", tables.Add(1))
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (resource_key TEXT PRIMARY KEY, value "+blobType(d)+")"); err != nil {
			b.Fatal(err)
		}
		upsert := placeholders(d, "INSERT INTO "+table+" (resource_key, value) VALUES (?, ?)"+
			" ON CONFLICT (resource_key) DO UPDATE SET value = excluded.value")
		i := uint64(0)
		for b.Loop() {
			i++
			if _, err := db.ExecContext(ctx, upsert, "k", nextValue(buf, i)); err != nil {
				b.Fatal(err)
			}
		}
		reportWrites(b)
	})
}

func blobType(d zxidfence.Dialect) string {
	if d == zxidfence.Postgres {
		return "BYTEA"
	}
	return "BLOB"
}

func BenchmarkZooKeeper(b *testing.B) {
	ctx := context.Background()
	conn := connectZK(b)
	dir := freshZnode(b, conn)
	leader := campaign(b, conn, dir)
	buf := make([]byte, 64)
	b.Run("guarded", func(b *testing.B) {
		z := newZooKeeper(b, conn)
		target := dir + "/guarded"
		i := uint64(0)
		for b.Loop() {
			i++
			if err := z.Write(ctx, target, leader, nextValue(buf, i)); err != nil {
				b.Fatal(err)
			}
		}
		reportWrites(b)
	})
	b.Run("unguarded", func(b *testing.B) {
		target := dir + "/plain"
		if _, err := conn.Create(target, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			b.Fatal(err)
		}
		i := uint64(0)
		for b.Loop() {
			i++
			if _, err := conn.Set(target, nextValue(buf, i), -1); err != nil {
				b.Fatal(err)
			}
		}
		reportWrites(b)
	})
}

func BenchmarkHTTP(b *testing.B) {
	ctx := context.Background()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	key := func(*http.Request) (string, error) { return "k", nil }
	run := func(b *testing.B, h http.Handler, fenced bool) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		client := srv.Client()
		tok := zxidfence.Token(0)
		for b.Loop() {
			tok++
			req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL, nil)
			if fenced {
				zxidfence.SetHeader(req.Header, zxidfence.At(tok))
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				b.Fatalf("status %s", resp.Status)
			}
		}
		reportWrites(b)
	}
	b.Run("guarded", func(b *testing.B) { run(b, zxidfence.Middleware(zxidfence.NewMemory(), key)(ok), true) })
	b.Run("unguarded", func(b *testing.B) { run(b, ok, false) })
}
