package devcli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
	"github.com/zkelect/zkelect/zxidfence"
)

// exitStale is a demo worker's exit status once the store refused its token.
const exitStale = 3

func newDemoWorkerCmd() *cobra.Command {
	var (
		store, shard, token string
		every               time.Duration
	)
	cmd := &cobra.Command{
		Use:   "worker --store URL --shard ID --token TOKEN",
		Short: "A shard's work in the demo: write to the fenced store with the leadership's token",
		Long: `Writes to the fenced store every --every until SIGTERM, then writes once more
(a final flush, as real workers do) and exits. It exits with status 3 as soon
as the store refuses its token as stale.`,
		Example: `  zkelect shards --root /demo --shards 8 \
      --exec 'exec zkelect-dev demo worker --store http://127.0.0.1:8080 --shard {shard} --token {token}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tok, err := zxidfence.ParseToken(token)
			if err != nil {
				return fmt.Errorf("invalid --token %q: pass the leadership's token ({token} in --exec)", token)
			}
			if store == "" || shard == "" || every <= 0 {
				return errors.New("demo worker needs --store URL, --shard ID and a positive --every")
			}
			ctx, stop := cli.SignalContext(cmd.Context())
			defer stop()
			w := &demoWorker{store: store, shard: shard, member: os.Getenv(cli.EnvParticipantID),
				client: newStoreClient(tok)}
			return w.run(ctx, every)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&store, "store", "", "base URL of the fenced store")
	fs.StringVar(&shard, "shard", "", "shard id")
	fs.StringVar(&token, "token", "", "fencing token (decimal, hex or epoch:counter)")
	fs.DurationVar(&every, "every", 250*time.Millisecond, "time between writes")
	return cmd
}

// demoWorker writes one shard's value to the store.
type demoWorker struct {
	store, shard, member string
	client               *http.Client
}

// run writes every interval until ctx is done, then flushes once more.
func (w *demoWorker) run(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return w.write(context.Background(), "final flush")
		case <-t.C:
		}
		if err := w.write(ctx, fmt.Sprintf("write %d", n)); err != nil {
			var ee *cli.ExitError
			if errors.As(err, &ee) {
				return err
			}
		}
	}
}

// write sends one value; a stale token ends the worker.
func (w *demoWorker) write(ctx context.Context, what string) error {
	value := fmt.Sprintf("%s of shard %s by %s", what, w.shard, w.member)
	err := storeWrite(ctx, w.client, w.store, w.shard, w.member, value)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zxidfence.ErrStaleToken):
		return cli.NewExitError(exitStale, fmt.Errorf("demo worker for shard %s fenced off: %w", w.shard, err))
	case ctx.Err() != nil:
		return nil
	}
	fmt.Fprintln(os.Stderr, "zkelect-dev demo worker:", err)
	return err
}

func newDemoStoreCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:     "store [--listen ADDR]",
		Short:   "Serve the demo's fenced store: PUT /v1/shards/{shard} with a Fencing-Token header",
		Example: `  zkelect-dev demo store --listen 127.0.0.1:8080`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := cli.SignalContext(cmd.Context())
			defer stop()
			out := cmd.OutOrStdout()
			reg := prometheus.NewRegistry()
			st, err := newFencedStore(reg, func(ev storeEvent) {
				if !ev.Accepted {
					fmt.Fprintf(out, "rejected shard=%s member=%s presented=%s highest=%s\n",
						ev.Shard, ev.Member, ev.Presented, ev.Highest)
				}
			})
			if err != nil {
				return err
			}
			addr, wait, err := cli.ServeHTTP(ctx, listen, st.handler(reg))
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "fenced store listening on http://%s\n", addr)
			return wait()
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "HTTP address")
	return cmd
}
