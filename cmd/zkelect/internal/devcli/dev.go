package devcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
	"github.com/zkelect/zkelect/testenv"
)

// devTick is dev's default tickTime: sessions from 400 ms.
const devTick = 200 * time.Millisecond

// devHeap is dev's default maximum Java heap per server: room for tens of
// thousands of shards' znodes (testenv's own default suits tests).
const devHeap = "512m"

func newDevCmd() *cobra.Command {
	opts := testenv.Options{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local ZooKeeper ensemble on loopback until Ctrl-C",
		Long: `Starts a ZooKeeper ensemble (3 servers by default) on free 127.0.0.1 ports,
each server a Java process with its data in a temporary directory, and prints
its connect string as a ZKELECT_ZK=... line. On Ctrl-C (SIGINT) or SIGTERM it
kills every server and removes the directory. Session timeouts are bounded to
2 ticks..--max-session-timeout (by default 20 ticks, and at least 10s: what the
other commands ask for by default, so none of them is granted less). Needs Java
and ZooKeeper (make deps installs them).`,
		Example: `  make dev
  zkelect-dev dev --servers 5 --tick-time 100ms
  zkelect-dev dev --servers 1 --heap 2g --max-session-timeout 30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("max-session-timeout") {
				opts.MaxSessionTimeout = max(20*opts.TickTime, cli.DefaultSessionTimeout)
			}
			if err := checkDevOptions(opts); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runDev(ctx, cmd.OutOrStdout(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Servers, "servers", 3, "number of servers: 1 (standalone), 3 or 5")
	cmd.Flags().DurationVar(&opts.TickTime, "tick-time", devTick,
		"ZooKeeper tickTime, whole milliseconds, at least 10ms; session timeouts may range over 2..20 ticks")
	cmd.Flags().DurationVar(&opts.MaxSessionTimeout, "max-session-timeout", 0,
		"upper bound on negotiated session timeouts, at least 2 ticks (default the longer of 20 ticks and 10s, what the other commands ask by default)")
	cmd.Flags().StringVar(&opts.Heap, "heap", devHeap, "maximum Java heap of each server (java -Xmx), e.g. 512m or 2g")
	return cmd
}

// devFlagOf names dev's flag for each testenv.Options field it sets.
var devFlagOf = map[string]string{
	"Servers": "servers", "TickTime": "tick-time", "MaxSessionTimeout": "max-session-timeout", "Heap": "heap",
}

// checkDevOptions refuses flag values testenv.Start would refuse, with a
// one-line error naming the flag, and those it would silently replace:
// --servers and --tick-time 0 (testenv's defaults) and an even ensemble.
func checkDevOptions(o testenv.Options) error {
	switch {
	case o.Servers != 1 && o.Servers != 3 && o.Servers != 5:
		return fmt.Errorf("invalid --servers %d: use 1 (standalone), 3 or 5", o.Servers)
	case o.TickTime == 0:
		return fmt.Errorf("invalid --tick-time 0s: want whole milliseconds, at least %v (default %v)", testenv.MinTickTime, devTick)
	}
	var oe *testenv.OptionsError
	if err := o.Validate(); errors.As(err, &oe) {
		return devFlagError(oe)
	} else if err != nil {
		return err
	}
	return nil
}

// devFlagError restates testenv's complaint about a field as one about its
// flag.
func devFlagError(oe *testenv.OptionsError) error {
	flag, value := devFlagOf[oe.Field], fmt.Sprint(oe.Value)
	switch oe.Field {
	case "Heap":
		value = fmt.Sprintf("%q", oe.Value)
	case "TickTime":
		return fmt.Errorf("invalid --%s %s: %s (default %v)", flag, value, oe.Reason, devTick)
	case "MaxSessionTimeout":
		return fmt.Errorf("invalid --%s %s: %s (dev's minimum is 2 x --tick-time)", flag, value, oe.Reason)
	}
	return fmt.Errorf("invalid --%s %s: %s", flag, value, oe.Reason)
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
	fmt.Fprintln(out, "zkelect-dev dev: stopping ZooKeeper")
	if err := c.Close(); err != nil {
		return fmt.Errorf("stop ZooKeeper: %w", err)
	}
	return nil
}
