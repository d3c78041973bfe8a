package testenv

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

func TestStartPostgresServesQueries(t *testing.T) {
	dsn := StartPostgres(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT 40 + 2").Scan(&n); err != nil {
		t.Fatalf("query %s: %v", dsn, err)
	}
	if n != 42 {
		t.Fatalf("SELECT 40 + 2 = %d", n)
	}
}

func TestPostgresCloseIsIdempotentAndStopsServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), postgresStartTimeout)
	defer cancel()
	pg, err := StartPostgresServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := pg.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	select {
	case <-pg.exited:
	default:
		t.Fatal("server process still running after Close")
	}
	db, err := sql.Open("pgx", pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping succeeded after Close")
	}
}
