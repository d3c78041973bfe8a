package zxidfence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

// fencedStore is a resource behind a guard: write stores tok as the value of
// key under fence At(tok); read returns the stored value and the guard's
// highest fence for key.
type fencedStore struct {
	write func(ctx context.Context, key string, tok zxidfence.Token) error
	read  func(ctx context.Context, key string) (value zxidfence.Token, highest zxidfence.Fence, err error)
}

const (
	propWriters = 12
	propWrites  = 30
	propMaxTok  = 40
)

var propKeys = []string{"shard-0", "shard-1", "shard-2"}

// TestConcurrentWritersNeverLeaveALowerValue is the property test: many
// writers with random tokens, and at the end every key's value carries the
// highest token any writer had accepted, the guard's highest is that token,
// and every refusal named a higher fence than the one presented.
func TestConcurrentWritersNeverLeaveALowerValue(t *testing.T) {
	for name, store := range propertyStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			accepted := concurrentRandomWrites(ctx, t, store)
			for key, max := range accepted {
				value, highest, err := store.read(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if value != max || highest != zxidfence.At(max) {
					t.Errorf("%s: value %v, highest %v; want both at the highest accepted token %v", key, value, highest, max)
				}
			}
		})
	}
}

// concurrentRandomWrites runs the writers and returns, per key, the highest
// token a write was accepted with.
func concurrentRandomWrites(ctx context.Context, t *testing.T, store fencedStore) map[string]zxidfence.Token {
	var max [3]atomic.Uint64
	var wg sync.WaitGroup
	errs := make(chan error, propWriters)
	for w := range propWriters {
		rng := rand.New(rand.NewPCG(uint64(w), 42))
		wg.Go(func() {
			for range propWrites {
				k := rng.IntN(len(propKeys))
				tok := zxidfence.Token(1 + rng.IntN(propMaxTok))
				err := store.write(ctx, propKeys[k], tok)
				if err := checkOutcome(tok, err); err != nil {
					errs <- err
					return
				}
				if err == nil {
					raise(&max[k], uint64(tok))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out := map[string]zxidfence.Token{}
	for k, key := range propKeys {
		out[key] = zxidfence.Token(max[k].Load())
	}
	return out
}

// checkOutcome accepts success or a stale rejection naming a higher fence.
func checkOutcome(tok zxidfence.Token, err error) error {
	if err == nil {
		return nil
	}
	var stale *zxidfence.StaleTokenError
	if !errors.As(err, &stale) {
		return fmt.Errorf("write with %v: %w (want nil or *StaleTokenError)", tok, err)
	}
	if stale.Presented != zxidfence.At(tok) || stale.Highest.Compare(stale.Presented) <= 0 {
		return fmt.Errorf("write with %v refused with %+v: highest must exceed presented", tok, *stale)
	}
	return nil
}

func raise(a *atomic.Uint64, v uint64) {
	for cur := a.Load(); v > cur && !a.CompareAndSwap(cur, v); cur = a.Load() {
	}
}

func propertyStores(t *testing.T) map[string]fencedStore {
	stores := map[string]fencedStore{"memory": memoryStore(), "zookeeper": zooKeeperStore(t), "http": httpStore(t)}
	for _, d := range []zxidfence.Dialect{zxidfence.SQLite, zxidfence.Postgres} {
		stores[d.String()+"-write"] = sqlWriteStore(t, d)
		stores[d.String()+"-tx"] = sqlTxStore(t, d)
	}
	return stores
}

func openDialect(t testing.TB, d zxidfence.Dialect) *sql.DB {
	if d == zxidfence.Postgres {
		return openPostgres(t)
	}
	return openSQLite(t)
}

// memoryStore keeps each key's value in a cell written only under the
// Memory guard's lock (the race detector checks that it is).
func memoryStore() fencedStore {
	g := zxidfence.NewMemory()
	cells := map[string]*zxidfence.Token{}
	for _, k := range propKeys {
		cells[k] = new(zxidfence.Token)
	}
	return fencedStore{
		write: func(ctx context.Context, key string, tok zxidfence.Token) error {
			return g.Do(ctx, key, zxidfence.At(tok), func(context.Context) error { *cells[key] = tok; return nil })
		},
		read: func(ctx context.Context, key string) (zxidfence.Token, zxidfence.Fence, error) {
			var v zxidfence.Token
			f, err := g.Highest(ctx, key)
			_ = g.Do(ctx, key, f, func(context.Context) error { v = *cells[key]; return nil })
			return v, f, err
		},
	}
}

// sqlWriteStore stores the value in the guard's own table with Write, over
// as many connections as writers.
func sqlWriteStore(t *testing.T, d zxidfence.Dialect) fencedStore {
	db := openDialect(t, d)
	db.SetMaxOpenConns(propWriters)
	g := newSQLGuard(t, db, d)
	return fencedStore{
		write: func(ctx context.Context, key string, tok zxidfence.Token) error {
			v, _ := tok.MarshalBinary()
			return g.Write(ctx, key, zxidfence.At(tok), v)
		},
		read: func(ctx context.Context, key string) (zxidfence.Token, zxidfence.Fence, error) {
			f, raw, err := g.Read(ctx, key)
			if err != nil {
				return 0, f, err
			}
			var v zxidfence.Token
			return v, f, v.UnmarshalBinary(raw)
		},
	}
}

// sqlTxStore stores the value in the caller's own table, updated by the
// caller's statement inside WriteTx.
func sqlTxStore(t *testing.T, d zxidfence.Dialect) fencedStore {
	db := openDialect(t, d)
	db.SetMaxOpenConns(propWriters)
	g := newSQLGuard(t, db, d)
	table := fmt.Sprintf("account_%d", tables.Add(1))
	ctx := testContext(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (k TEXT PRIMARY KEY, tok BIGINT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	for _, k := range propKeys {
		if _, err := db.ExecContext(ctx, placeholders(d, "INSERT INTO "+table+" VALUES (?, 0)"), k); err != nil {
			t.Fatal(err)
		}
	}
	update := placeholders(d, "UPDATE "+table+" SET tok = ? WHERE k = ?")
	query := placeholders(d, "SELECT tok FROM "+table+" WHERE k = ?")
	return fencedStore{
		write: func(ctx context.Context, key string, tok zxidfence.Token) error {
			return g.WriteTx(ctx, key, zxidfence.At(tok), func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, update, int64(tok), key)
				return err
			})
		},
		read: func(ctx context.Context, key string) (zxidfence.Token, zxidfence.Fence, error) {
			var v int64
			if err := db.QueryRowContext(ctx, query, key).Scan(&v); err != nil {
				return 0, zxidfence.Fence{}, err
			}
			f, err := g.Highest(ctx, key)
			return zxidfence.Token(v), f, err
		},
	}
}

// placeholders turns ? into $1, $2, … for PostgreSQL.
func placeholders(d zxidfence.Dialect, q string) string {
	if d != zxidfence.Postgres {
		return q
	}
	out, n := []byte{}, 0
	for i := range len(q) {
		if q[i] == '?' {
			n++
			out = fmt.Appendf(out, "$%d", n)
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}

// zooKeeperStore writes target znodes through the ZooKeeper guard, all
// writers sharing one live election znode (version -1) so that only the
// fence recorded in the target decides.
func zooKeeperStore(t *testing.T) fencedStore {
	conn := connectZK(t)
	z := newZooKeeper(t, conn)
	dir := freshZnode(t, conn)
	election := campaign(t, conn, dir).Znode
	return fencedStore{
		write: func(ctx context.Context, key string, tok zxidfence.Token) error {
			v, _ := tok.MarshalBinary()
			return z.Write(ctx, dir+"/"+key, zxidfence.Leader{Znode: election, Version: -1, Fence: zxidfence.At(tok)}, v)
		},
		read: func(ctx context.Context, key string) (zxidfence.Token, zxidfence.Fence, error) {
			f, raw, err := z.Read(ctx, dir+"/"+key)
			if err != nil {
				return 0, f, err
			}
			var v zxidfence.Token
			return v, f, v.UnmarshalBinary(raw)
		},
	}
}

// httpStore sends each write as an HTTP request through Transport to a
// server whose Middleware admits it through a Memory guard.
func httpStore(t *testing.T) fencedStore {
	g := zxidfence.NewMemory()
	cells := map[string]*zxidfence.Token{}
	for _, k := range propKeys {
		cells[k] = new(zxidfence.Token)
	}
	key := func(r *http.Request) (string, error) { return strings.TrimPrefix(r.URL.Path, "/"), nil }
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _ := zxidfence.FenceFromHeader(r.Header)
		k, _ := key(r)
		*cells[k] = f.Token
	})
	srv := httptest.NewServer(zxidfence.Middleware(g, key)(h))
	t.Cleanup(srv.Close)
	return fencedStore{
		write: func(ctx context.Context, key string, tok zxidfence.Token) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/"+key, nil)
			if err != nil {
				return err
			}
			zxidfence.SetHeader(req.Header, zxidfence.At(tok))
			resp, err := srv.Client().Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if err := zxidfence.ResponseError(resp); err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %s", resp.Status)
			}
			return nil
		},
		read: func(ctx context.Context, key string) (zxidfence.Token, zxidfence.Fence, error) {
			f, err := g.Highest(ctx, key)
			var v zxidfence.Token
			_ = g.Do(ctx, key, f, func(context.Context) error { v = *cells[key]; return nil })
			return v, f, err
		},
	}
}
