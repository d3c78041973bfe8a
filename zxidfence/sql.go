package zxidfence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
)

// SQL is a Guard over database/sql. Each resource key is a row of one table
// (see Schema) holding the generation and fencing token of the last accepted
// write and, for Write, the value itself. Admission and write are one
// statement (or one transaction), so the database decides; the table
// survives restarts, and no code path lowers a row's fence except
// AcceptGeneration. Safe for concurrent use by any number of processes.
//
// The statement at its heart, for PostgreSQL:
//
//	INSERT INTO zxidfence (resource_key, generation, fencing_token, value) VALUES ($1, $2, $3, $4)
//	ON CONFLICT (resource_key) DO UPDATE
//	  SET generation = excluded.generation, fencing_token = excluded.fencing_token, value = excluded.value
//	  WHERE (zxidfence.generation = excluded.generation AND zxidfence.fencing_token <= excluded.fencing_token)
//	     OR (zxidfence.generation = 0 AND zxidfence.fencing_token = 0)
//
// Zero rows affected means the write was stale. Tokens and generations are
// stored as signed BIGINT: values at or above 2^63 are refused with
// ErrOutOfRange (zxids are far below).
type SQL struct {
	db   *sql.DB
	d    Dialect
	stmt sqlStatements
	cfg  config
}

var _ Guard = (*SQL)(nil)

// NewSQL returns a guard over db in dialect d. It accepts WithTable,
// WithMetrics and WithLogger. It does not touch the database: create the
// table with CreateTable, or with Schema in your own migrations.
func NewSQL(db *sql.DB, d Dialect, opts ...Option) (*SQL, error) {
	if db == nil {
		return nil, errors.New("zxidfence: NewSQL needs a non-nil *sql.DB")
	}
	cfg := newConfig(opts)
	stmt, err := newStatements(d, cfg.table)
	if err != nil {
		return nil, err
	}
	return &SQL{db: db, d: d, stmt: stmt, cfg: cfg}, nil
}

// Table returns the name of the guard's table.
func (s *SQL) Table() string { return s.cfg.table }

// Schema returns the guard's CREATE TABLE IF NOT EXISTS statement.
func (s *SQL) Schema() string { return s.stmt.schema }

// Write stores value for key under fence f in one statement, if f is not
// lower than the key's fence. It creates the row for a new key. Errors are
// those of Guard.Do, ErrOutOfRange, or the database's (wrapped).
func (s *SQL) Write(ctx context.Context, key string, f Fence, value []byte) error {
	gen, tok, err := s.validate(key, f)
	if err != nil {
		return s.observe(key, f, err)
	}
	res, err := s.db.ExecContext(ctx, s.stmt.write, key, gen, tok, value)
	if err != nil {
		return fmt.Errorf("zxidfence: fenced write of %q: %w", key, err)
	}
	return s.observe(key, f, s.settle(ctx, s.db, key, f, res))
}

// WriteTx runs fn inside a transaction that first records fence f for key
// (a fenced upsert, as in Write but without a value). The key's row stays
// locked until the transaction ends, so fn's statements on tx cannot
// interleave with another fenced write of the key. The transaction commits
// if fn returns nil and rolls back otherwise, fence included; if fn panics,
// the transaction rolls back (freeing its connection and locks) and the panic
// goes on. Errors are those of Guard.Do, ErrOutOfRange, or the database's
// (wrapped).
func (s *SQL) WriteTx(ctx context.Context, key string, f Fence, fn func(ctx context.Context, tx *sql.Tx) error) error {
	gen, tok, err := s.validate(key, f)
	if err != nil {
		return s.observe(key, f, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("zxidfence: begin fenced transaction for %q: %w", key, err)
	}
	defer rollback(tx)
	res, err := tx.ExecContext(ctx, s.stmt.record, key, gen, tok)
	if err != nil {
		return fmt.Errorf("zxidfence: record fence of %q: %w", key, err)
	}
	if err := s.observe(key, f, s.settle(ctx, tx, key, f, res)); err != nil {
		return err
	}
	if fn != nil {
		if err := fn(ctx, tx); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("zxidfence: commit fenced transaction for %q: %w", key, err)
	}
	return nil
}

// Do implements Guard with WriteTx: fn finds the transaction with
// TxFromContext(ctx) and must use it for its statements. If fn fails, the
// transaction rolls back and the fence is not recorded; if fn panics, the
// transaction rolls back before the panic goes on to the caller.
func (s *SQL) Do(ctx context.Context, key string, f Fence, fn func(ctx context.Context) error) error {
	return s.WriteTx(ctx, key, f, func(ctx context.Context, tx *sql.Tx) error {
		if fn == nil {
			return nil
		}
		return fn(context.WithValue(ctx, txKey{}, tx))
	})
}

type txKey struct{}

// TxFromContext returns the transaction of the SQL guard's Do that ctx was
// passed to, or nil outside one.
func TxFromContext(ctx context.Context) *sql.Tx {
	tx, _ := ctx.Value(txKey{}).(*sql.Tx)
	return tx
}

// Highest implements Guard.
func (s *SQL) Highest(ctx context.Context, key string) (Fence, error) {
	f, _, err := s.Read(ctx, key)
	return f, err
}

// Read returns key's fence and value, or the zero Fence and nil when the key
// has no row.
func (s *SQL) Read(ctx context.Context, key string) (Fence, []byte, error) {
	return s.read(ctx, s.db, key)
}

// AcceptGeneration implements Guard. It runs in one transaction that locks
// the key's row, so it does not interleave with writes.
func (s *SQL) AcceptGeneration(ctx context.Context, key string, gen uint64, reason string) (prev Fence, err error) {
	switch {
	case key == "":
		return Fence{}, fmt.Errorf("%w: empty key", ErrInvalidKey)
	case gen > math.MaxInt64:
		return Fence{}, fmt.Errorf("%w: generation %d for %q", ErrOutOfRange, gen, key)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Fence{}, fmt.Errorf("zxidfence: begin generation change for %q: %w", key, err)
	}
	defer rollback(tx)
	if _, err := tx.ExecContext(ctx, s.stmt.lock, key); err != nil {
		return Fence{}, fmt.Errorf("zxidfence: lock %q: %w", key, err)
	}
	if prev, _, err = s.read(ctx, tx, key); err != nil {
		return Fence{}, err
	}
	next, err := nextGeneration(key, prev, gen)
	if err != nil {
		return prev, err
	}
	if _, err := tx.ExecContext(ctx, s.stmt.nextGen, key, int64(gen)); err != nil {
		return prev, fmt.Errorf("zxidfence: move %q to generation %d: %w", key, gen, err)
	}
	if err := tx.Commit(); err != nil {
		return prev, fmt.Errorf("zxidfence: commit generation change for %q: %w", key, err)
	}
	logGeneration(s.cfg.logger, KindSQL, key, prev, next, reason)
	s.cfg.metrics.generationChanged(KindSQL, key, next)
	return prev, nil
}

// rollback ends tx unless it has committed (then Rollback is a no-op
// returning sql.ErrTxDone). Deferred, it also runs while a panic in the
// caller's fn unwinds, so the transaction never outlives the call: a leaked
// one would hold its connection and the key's row lock (for SQLite, the
// database's write lock) forever.
func rollback(tx *sql.Tx) { _ = tx.Rollback() }

// querier is what *sql.DB and *sql.Tx have in common here.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *SQL) read(ctx context.Context, q querier, key string) (Fence, []byte, error) {
	var gen, tok int64
	var value []byte
	err := q.QueryRowContext(ctx, s.stmt.read, key).Scan(&gen, &tok, &value)
	if errors.Is(err, sql.ErrNoRows) {
		return Fence{}, nil, nil
	}
	if err != nil {
		return Fence{}, nil, fmt.Errorf("zxidfence: read fence of %q: %w", key, err)
	}
	if gen < 0 || tok < 0 {
		return Fence{}, nil, fmt.Errorf("%w: row %q holds generation %d, token %d", ErrOutOfRange, key, gen, tok)
	}
	return Fence{Generation: uint64(gen), Token: Token(tok)}, value, nil
}

// settle turns the result of a fenced upsert into nil (one row written) or
// the rejection, classified against the fence read back with q.
func (s *SQL) settle(ctx context.Context, q querier, key string, f Fence, res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("zxidfence: rows affected by fenced write of %q: %w", key, err)
	}
	if n > 0 {
		return nil
	}
	h, _, err := s.read(ctx, q, key)
	if err != nil {
		return err
	}
	if err := admit(key, h, f); err != nil {
		return err
	}
	// Refused by the database, admissible by the row read after: only an
	// AcceptGeneration racing the write can do that. Report it as stale.
	return &StaleTokenError{Key: key, Presented: f, Highest: h}
}

func (s *SQL) validate(key string, f Fence) (gen, tok int64, err error) {
	switch {
	case key == "":
		return 0, 0, fmt.Errorf("%w: empty key", ErrInvalidKey)
	case f.Token.IsZero():
		return 0, 0, fmt.Errorf("%w for %q", ErrNoToken, key)
	case f.Generation > math.MaxInt64 || uint64(f.Token) > math.MaxInt64:
		return 0, 0, fmt.Errorf("%w: %q presented %s", ErrOutOfRange, key, f)
	}
	return int64(f.Generation), int64(f.Token), nil
}

func (s *SQL) observe(key string, f Fence, err error) error {
	s.cfg.metrics.observe(KindSQL, key, f, err)
	if err != nil && rejectReason(err) != "" {
		logRejection(s.cfg.logger, KindSQL, err)
	}
	return err
}
