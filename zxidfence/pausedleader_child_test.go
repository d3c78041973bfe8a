package zxidfence_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// pausedLeaderChild is leader A: it wins the election, writes "A-before"
// everywhere, prints READY and waits for SIGCONT; then, without looking at
// its leadership (a paused process has not noticed anything yet), it writes
// "A-after" with its old token to every resource and reports each outcome.
func pausedLeaderChild() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := runPausedLeaderChild(ctx); err != nil {
		fmt.Println("FATAL", err)
		return 1
	}
	return 0
}

func runPausedLeaderChild(ctx context.Context) error {
	s, err := recipe.Connect(ctx, strings.Split(os.Getenv(envZooKeeper), ","), recipe.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := recipe.NewCandidate(s, os.Getenv(envElection), recipe.WithParticipantID("A"))
	if err != nil {
		return err
	}
	defer c.Close()
	lead, err := c.Campaign(ctx)
	if err != nil {
		return err
	}
	fmt.Println("LEADER", lead.Token().Decimal())
	w, err := childWriter(s, lead)
	if err != nil {
		return err
	}
	for _, kind := range guardKinds {
		if err := w.write(ctx, kind, "A-before"); err != nil {
			return fmt.Errorf("write to %s: %w", kind, err)
		}
	}
	resumed := make(chan os.Signal, 1)
	signal.Notify(resumed, syscall.SIGCONT)
	defer signal.Stop(resumed)
	fmt.Println("READY")
	<-resumed
	for _, kind := range guardKinds {
		fmt.Println(report(kind, w.leader.Fence, w.writeRetrying(ctx, kind, "A-after")))
	}
	return nil
}

func childWriter(s *recipe.Session, lead *recipe.Leadership) (writer, error) {
	sqlite, err1 := childSQL("sqlite", os.Getenv(envSQLite), zxidfence.SQLite, os.Getenv(envSQLiteTable))
	postgres, err2 := childSQL("pgx", os.Getenv(envPostgres), zxidfence.Postgres, os.Getenv(envPGTable))
	z, err3 := zxidfence.NewZooKeeper(s.Conn())
	if err := errors.Join(err1, err2, err3); err != nil {
		return writer{}, err
	}
	return writer{
		http:      os.Getenv(envHTTP),
		sqlite:    sqlite,
		postgres:  postgres,
		zookeeper: z,
		zkTarget:  os.Getenv(envZKTarget),
		leader:    zxidfence.LeaderOf(lead, 0),
	}, nil
}

func childSQL(driver, dsn string, d zxidfence.Dialect, table string) (*zxidfence.SQL, error) {
	db, err := sqlOpen(driver, dsn)
	if err != nil {
		return nil, err
	}
	return zxidfence.NewSQL(db, d, zxidfence.WithTable(table))
}

// writeRetrying is write, retried while the failure is the ZooKeeper
// connection catching up with the expired session (no answer yet about the
// write itself), as a leader's write loop would.
func (w writer) writeRetrying(ctx context.Context, kind, value string) error {
	retry := time.NewTicker(50 * time.Millisecond)
	defer retry.Stop()
	for {
		err := w.write(ctx, kind, value)
		if kind != "zookeeper" || err == nil || rejectedOutcome(err) != "" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-retry.C:
		}
	}
}

func rejectedOutcome(err error) string {
	switch {
	case errors.Is(err, zxidfence.ErrStaleToken):
		return "stale"
	case errors.Is(err, zxidfence.ErrNotLeader):
		return "notleader"
	}
	return ""
}

// report formats one outcome as the line checkResumedWrite parses.
func report(kind string, presented zxidfence.Fence, err error) string {
	outcome, highest := "accepted", "-"
	var stale *zxidfence.StaleTokenError
	if errors.As(err, &stale) {
		highest = stale.Highest.Token.Decimal()
	}
	if err != nil {
		outcome = rejectedOutcome(err)
		if outcome == "" {
			outcome = "error"
		}
	}
	msg := "-"
	if err != nil {
		msg = strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return fmt.Sprintf("RESULT %s %s presented=%s highest=%s err=%s", kind, outcome, presented.Token.Decimal(), highest, msg)
}
