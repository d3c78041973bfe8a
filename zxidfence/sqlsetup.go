package zxidfence

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// Set-up waits, as named constants.
const (
	// sqliteSetupWait is how long CreateTable waits for SQLite's write lock
	// when ctx has no deadline and the connection has no busy timeout.
	sqliteSetupWait = 30 * time.Second
	// setupAttempts bounds CreateTable's re-runs after PostgreSQL reports
	// that a concurrent creator won the race (see duplicateObject).
	setupAttempts = 3
)

// CreateTable creates the guard's table if it does not exist. It is safe to
// call from any number of processes at once, as every instance of a service
// does at start-up:
//
//   - PostgreSQL: CREATE TABLE IF NOT EXISTS is not atomic there (two
//     sessions that both see no table both insert its row type, and one
//     fails with 23505 on pg_type_typname_nsp_index). CreateTable runs it in
//     a transaction holding a transaction-scoped advisory lock
//     (pg_advisory_xact_lock, keyed by the table name), so creators queue;
//     and if a creator that does not take the lock (an older release, a
//     migration tool) wins the race anyway, the unique, duplicate-table or
//     duplicate-object (the row type) violation is answered by running the
//     statement again, which then finds the table.
//   - SQLite: the statement needs the database's write lock. CreateTable
//     waits for it (SQLite's busy timeout, set on its own connection for the
//     call when the DSN sets none) until ctx's deadline, or 30s without one,
//     instead of failing with SQLITE_BUSY ("database is locked").
//
// Errors are the database's, wrapped with the table's name, or ctx's.
func (s *SQL) CreateTable(ctx context.Context) error {
	var err error
	for range setupAttempts {
		if s.d == Postgres {
			err = s.createPostgres(ctx)
		} else {
			err = s.createSQLite(ctx)
		}
		if err == nil || !duplicateObject(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("zxidfence: create table %s: %w", s.cfg.table, err)
	}
	return nil
}

// createPostgres runs the schema statement behind the table's advisory lock;
// the lock is released when the transaction ends.
func (s *SQL) createPostgres(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer rollback(tx)
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", setupLockKey(s.cfg.table)); err != nil {
		return fmt.Errorf("advisory lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.stmt.schema); err != nil {
		return err
	}
	return tx.Commit()
}

// createSQLite runs the schema statement on a connection of its own whose
// busy timeout is at least the time ctx leaves, restoring it afterwards.
func (s *SQL) createSQLite(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connection: %w", err)
	}
	defer conn.Close()
	var prev int64
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&prev); err != nil {
		return fmt.Errorf("read busy timeout: %w", err)
	}
	if prev == 0 {
		wait := sqliteSetupWait
		if d, ok := ctx.Deadline(); ok {
			wait = time.Until(d)
		}
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", max(wait.Milliseconds(), 1))); err != nil {
			return fmt.Errorf("set busy timeout: %w", err)
		}
		// The connection goes back to the pool: leave it as the DSN made it,
		// even when ctx has ended.
		defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = 0") }()
	}
	_, err = conn.ExecContext(ctx, s.stmt.schema)
	return err
}

// setupLockKey is the advisory-lock key for creating table: a hash of a name
// no other lock of ours uses.
func setupLockKey(table string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("zxidfence.CreateTable " + table))
	return int64(h.Sum64())
}

// duplicateObject reports whether err is PostgreSQL's unique_violation
// (23505, a catalog row inserted by a concurrent creator), duplicate_table
// (42P07) or duplicate_object (42710: the table's row type, committed by a
// concurrent creator between our check and our insert of it), as reported
// by pgx's and lib/pq's errors through SQLState.
func duplicateObject(err error) bool {
	var coded interface{ SQLState() string }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.SQLState() {
	case "23505", "42P07", "42710":
		return true
	}
	return false
}
