package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for --sql postgres
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	_ "modernc.org/sqlite" // database/sql driver "sqlite" for --sql sqlite

	"github.com/zkelect/zkelect/zxidfence"
)

// fenceFlags name one fenced resource: a ZooKeeper target znode (--target,
// with --zk) or a row of a SQL guard's table (--sql, --dsn, --table, --key).
type fenceFlags struct {
	common  commonFlags
	target  string
	dialect string
	dsn     string
	table   string
	key     string
	timeout time.Duration
}

// defaultFenceTimeout bounds a fence command: a database or ensemble that
// never answers must not hold the operator's terminal.
const defaultFenceTimeout = 30 * time.Second

func (f *fenceFlags) register(cmd *cobra.Command) {
	f.common.register(cmd.Flags())
	f.common.registerACL(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&f.target, "target", "", "ZooKeeper target znode written by the ZooKeeper guard")
	fs.StringVar(&f.dialect, "sql", "", "SQL guard database: postgres or sqlite (with --dsn and --key)")
	fs.StringVar(&f.dsn, "dsn", "", "SQL database to open, e.g. postgres://user@host/db or file:/var/lib/app.db")
	fs.StringVar(&f.table, "table", zxidfence.DefaultTable, "SQL guard table")
	fs.StringVar(&f.key, "key", "", "resource key (the SQL guard's resource_key)")
	fs.DurationVar(&f.timeout, "timeout", defaultFenceTimeout, "give up if the command has not completed within this time")
}

// do runs op on the resource the flags name, within --timeout and until
// SIGINT or SIGTERM, and says which of those ended it.
func (f *fenceFlags) do(cmd *cobra.Command, op func(ctx context.Context, res fencedResource, key string) error) error {
	if f.timeout <= 0 {
		return fmt.Errorf("invalid --timeout %s: must be positive (e.g. 30s)", f.timeout)
	}
	sctx, stop := signalContext(cmd.Context())
	defer stop()
	ctx, cancel := context.WithTimeout(sctx, f.timeout)
	defer cancel()
	res, key, done, err := f.open(ctx, cmd.ErrOrStderr())
	if err == nil {
		err = op(ctx, res, key)
		done()
	}
	switch {
	case err == nil:
		return nil
	case isMissingTable(err):
		return fmt.Errorf("%w: table %s does not exist in this database: the application creates it "+
			"(zxidfence's CreateTable, or its Schema in your migrations) before its first fenced write; "+
			"check --dsn and --table", err, f.table)
	case sctx.Err() != nil:
		return fmt.Errorf("interrupted (%v)", err)
	case ctx.Err() != nil:
		return fmt.Errorf("no answer within --timeout %s: check --dsn or --zk and that the database or ensemble is reachable (%v)",
			f.timeout, err)
	}
	return err
}

// isMissingTable reports whether err is a database's "no such table"
// (SQLite) or undefined_table (PostgreSQL, SQLSTATE 42P01).
func isMissingTable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "42P01"
	}
	return strings.Contains(err.Error(), "no such table")
}

// fencedResource is what both guards offer an operator.
type fencedResource interface {
	Highest(ctx context.Context, key string) (zxidfence.Fence, error)
	AcceptGeneration(ctx context.Context, key string, gen uint64, reason string) (zxidfence.Fence, error)
}

// open returns the resource the flags name, its key, and a func releasing it.
func (f *fenceFlags) open(ctx context.Context, stderr io.Writer) (fencedResource, string, func(), error) {
	log, err := f.common.logger(stderr)
	if err != nil {
		return nil, "", nil, err
	}
	if f.dsn != "" || f.dialect != "" {
		if f.target != "" {
			return nil, "", nil, errors.New("--target names a ZooKeeper znode, --sql/--dsn a SQL row: pass one resource, not both")
		}
		return f.openSQL(log)
	}
	if f.target == "" {
		return nil, "", nil, errors.New("no resource given: pass --target ZNODE (with --zk) or --sql DIALECT --dsn DSN --key KEY")
	}
	if err := checkZNodePath("target", f.target); err != nil {
		return nil, "", nil, err
	}
	if err := f.common.validate(); err != nil {
		return nil, "", nil, err
	}
	sess, err := f.common.connect(ctx, log, nil)
	if err != nil {
		return nil, "", nil, err
	}
	acl, _ := f.common.znodeACL() // checked by validate
	z, err := zxidfence.NewZooKeeperSession(sess, zxidfence.WithLogger(log), zxidfence.WithACL(acl))
	if err != nil {
		_ = sess.Close()
		return nil, "", nil, err
	}
	return z, f.target, func() { _ = sess.Close() }, nil
}

func (f *fenceFlags) openSQL(log zerolog.Logger) (fencedResource, string, func(), error) {
	drivers := map[string]struct {
		driver  string
		dialect zxidfence.Dialect
	}{"postgres": {"pgx", zxidfence.Postgres}, "sqlite": {"sqlite", zxidfence.SQLite}}
	d, ok := drivers[f.dialect]
	switch {
	case !ok:
		return nil, "", nil, fmt.Errorf("invalid --sql %q: use postgres or sqlite", f.dialect)
	case f.dsn == "":
		return nil, "", nil, errors.New("missing --dsn: the database holding the SQL guard's table")
	case f.key == "":
		return nil, "", nil, errors.New("missing --key: the resource key (resource_key column)")
	}
	db, err := sql.Open(d.driver, f.dsn)
	if err != nil {
		return nil, "", nil, fmt.Errorf("open %s database: %w", f.dialect, err)
	}
	g, err := zxidfence.NewSQL(db, d.dialect, zxidfence.WithTable(f.table), zxidfence.WithLogger(log))
	if err != nil {
		_ = db.Close()
		return nil, "", nil, err
	}
	return g, f.key, func() { _ = db.Close() }, nil
}

func newFenceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fence",
		Short: "Inspect a fenced resource, or admit a rebuilt ensemble's generation",
		Long: "Fenced resources remember the highest fencing token (and generation) they accepted.\n" +
			"A ZooKeeper ensemble rebuilt from scratch restarts its zxids low, so its leaders are\n" +
			"refused until an operator admits the ensemble's new generation at each resource with\n" +
			"`zkelect fence accept-generation`, and configures the writers with that generation.",
	}
	cmd.AddCommand(newFenceShowCmd(), newFenceAcceptCmd())
	return cmd
}

func newFenceShowCmd() *cobra.Command {
	var f fenceFlags
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the highest fence a resource has accepted",
		Example: "  zkelect fence show --zk 127.0.0.1:2181 --target /apps/billing/ledger\n" +
			"  zkelect fence show --sql postgres --dsn postgres://app@db/app --key shard-3",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.do(cmd, func(ctx context.Context, res fencedResource, key string) error {
				h, err := res.Highest(ctx, key)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", key, describeFence(h))
				return err
			})
		},
	}
	f.register(cmd)
	return cmd
}

func newFenceAcceptCmd() *cobra.Command {
	var f fenceFlags
	var gen uint64
	var reason string
	cmd := &cobra.Command{
		Use:   "accept-generation",
		Short: "Admit a rebuilt ZooKeeper ensemble's generation at one resource (audited)",
		Long: "Moves the resource to --generation, which must be higher than its current one: writers\n" +
			"of the new generation are then accepted from their first token on, and writers of older\n" +
			"generations are refused. The change is logged at warn level with --reason.",
		Example: "  zkelect fence accept-generation --zk 127.0.0.1:2181 --target /apps/billing/ledger \\\n" +
			"      --generation 2 --reason 'ensemble rebuilt after disk loss, INC-42'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkGeneration(cmd, gen); err != nil {
				return err
			}
			if reason == "" {
				return errors.New("missing --reason: say why the generation changes (it is logged for the audit)")
			}
			return f.do(cmd, func(ctx context.Context, res fencedResource, key string) error {
				prev, err := res.AcceptGeneration(ctx, key, gen, reason)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: generation %d accepted (was %s); reason: %s\n",
					key, gen, describeFence(prev), reason)
				return err
			})
		},
	}
	f.register(cmd)
	cmd.Flags().Uint64Var(&gen, "generation", 0, "the generation to admit")
	cmd.Flags().StringVar(&reason, "reason", "", "why (required; logged)")
	return cmd
}

// checkGeneration refuses a missing --generation, and generation 0: every
// resource starts in generation 0 and generations only go up, so 0 can never
// be admitted.
func checkGeneration(cmd *cobra.Command, gen uint64) error {
	switch {
	case !cmd.Flags().Changed("generation"):
		return errors.New("missing --generation: the new ensemble's generation (higher than the current one)")
	case gen == 0:
		return errors.New("invalid --generation 0: every resource starts in generation 0 and generations only go up; " +
			"pass the rebuilt ensemble's generation, 1 or higher")
	}
	return nil
}

func describeFence(f zxidfence.Fence) string {
	if f.IsZero() {
		return "no fence yet"
	}
	return fmt.Sprintf("generation %d, token %s", f.Generation, f.Token)
}
