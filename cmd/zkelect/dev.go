package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/testenv"
)

// devTick is dev's default tickTime: sessions of 400 ms to 4 s.
const devTick = 200 * time.Millisecond

func newDevCmd() *cobra.Command {
	opts := testenv.Options{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local ZooKeeper ensemble on loopback until Ctrl-C",
		Long: `Starts a ZooKeeper ensemble (3 servers by default) on free 127.0.0.1 ports,
each server a Java process with its data in a temporary directory, and prints
its connect string as a ZKELECT_ZK=... line. On Ctrl-C (SIGINT) or SIGTERM it
kills every server and removes the directory. Session timeouts are bounded to
2..20 ticks. Needs Java and ZooKeeper (make deps installs them).`,
		Example: `  make dev
  zkelect dev --servers 5 --tick-time 100ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runDev(ctx, cmd.OutOrStdout(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Servers, "servers", 3, "number of servers: 1 (standalone), 3 or 5")
	cmd.Flags().DurationVar(&opts.TickTime, "tick-time", devTick,
		"ZooKeeper tickTime; session timeouts may range over 2..20 ticks")
	cmd.Flags().DurationVar(&opts.MaxSessionTimeout, "max-session-timeout", 0,
		"upper bound on negotiated session timeouts (default 20 ticks)")
	return cmd
}

// runDev starts the ensemble, reports it on out and keeps it until ctx is
// cancelled (by a signal), then stops it.
func runDev(ctx context.Context, out io.Writer, opts testenv.Options) error {
	begin := time.Now()
	c, err := testenv.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("start ZooKeeper: %w", err)
	}
	defer c.Close()
	fmt.Fprintf(out, "ZooKeeper: %d server(s) serving after %v, tickTime %v, data in %s\n",
		c.Size(), time.Since(begin).Round(time.Millisecond), c.TickTime(), c.Dir())
	for i, addr := range c.Addrs() {
		fmt.Fprintf(out, "  server %d: %s (pid %d)\n", i, addr, c.PID(i))
	}
	fmt.Fprintf(out, "ZKELECT_ZK=%s\n", c.ConnectString())
	fmt.Fprintln(out, "Ctrl-C to stop.")
	<-ctx.Done()
	fmt.Fprintln(out, "zkelect dev: stopping ZooKeeper")
	if err := c.Close(); err != nil {
		return fmt.Errorf("stop ZooKeeper: %w", err)
	}
	return nil
}
