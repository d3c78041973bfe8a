package zxidfence_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

// Environment of a create-table child (envChild "create-table").
const (
	envSetupDriver = "ZXIDFENCE_TEST_SETUP_DRIVER" // database/sql driver name
	envSetupDSN    = "ZXIDFENCE_TEST_SETUP_DSN"
	envSetupTable  = "ZXIDFENCE_TEST_SETUP_TABLE"
	envSetupRaw    = "ZXIDFENCE_TEST_SETUP_RAW" // "1": run Schema() alone, as a tool without the lock would
)

// createTableChild is one instance of a service starting up: it connects
// to the database, prints READY, and on SIGUSR1 (sent to every instance at
// once) calls CreateTable (or, as a creator that takes no lock, runs its
// Schema statement alone), printing CREATED or FATAL with the error.
func createTableChild() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := runCreateTableChild(ctx); err != nil {
		fmt.Println("FATAL", err)
		return 1
	}
	fmt.Println("CREATED")
	return 0
}

func runCreateTableChild(ctx context.Context) error {
	driver := os.Getenv(envSetupDriver)
	d := zxidfence.SQLite
	if driver == "pgx" {
		d = zxidfence.Postgres
	}
	db, err := sqlOpen(driver, os.Getenv(envSetupDSN))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return err
	}
	g, err := zxidfence.NewSQL(db, d, zxidfence.WithTable(os.Getenv(envSetupTable)))
	if err != nil {
		return err
	}
	start := make(chan os.Signal, 1)
	signal.Notify(start, syscall.SIGUSR1)
	defer signal.Stop(start)
	fmt.Println("READY")
	select {
	case <-start:
	case <-ctx.Done():
		return fmt.Errorf("no start signal: %w", ctx.Err())
	}
	if os.Getenv(envSetupRaw) == "1" {
		_, err = db.ExecContext(ctx, g.Schema())
		return err
	}
	return g.CreateTable(ctx)
}
