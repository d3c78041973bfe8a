package devcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// The demo's fixed shape.
const (
	demoRoot           = "/zkelect/demo"
	demoShards         = 64
	demoSessionTimeout = 3 * time.Second
	demoTick           = 200 * time.Millisecond
	demoStepTimeout    = 45 * time.Second // bound on each awaited step
)

var demoMembers = []string{"a", "b", "c"}

func newDemoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show failover and fencing on a local ensemble in under a minute",
		Long: `Starts a local 3-node ZooKeeper ensemble, a fenced store and three shards
daemons sharing 64 shards (each shard's leader runs a worker writing to the store
with its fencing token). Then it kills one daemon (SIGKILL), pauses another past
its session timeout (SIGSTOP) and resumes it, so its late writes with the old
token are refused by the store. It stops everything it started.
Needs Java and ZooKeeper (make deps installs them).`,
		Example: `  make demo
  go run ./cmd/zkelect/zkelect-dev demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := cli.SignalContext(cmd.Context())
			defer stop()
			return runDemo(ctx, cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(newDemoStoreCmd(), newDemoWorkerCmd())
	return cmd
}

// demo is the state of one demo run.
type demo struct {
	out     io.Writer
	start   time.Time
	dir     string
	exe     string
	zkc     *testenv.Cluster
	sess    *recipe.Session
	store   *fencedStore
	url     string
	daemons map[string]*daemonProc
	stopAll context.CancelFunc // ends the store's HTTP server
	waitAll func() error       // waits for it

	stale    chan storeEvent // rejections, for the demo to report
	accepted atomic.Int64
	rejected atomic.Int64
}

func runDemo(ctx context.Context, out io.Writer) (err error) {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "zkelect-demo-")
	if err != nil {
		return fmt.Errorf("create demo dir: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &demo{out: out, start: time.Now(), dir: dir, exe: exe, daemons: map[string]*daemonProc{},
		stale: make(chan storeEvent, 1024), stopAll: cancel, waitAll: func() error { return nil }}
	defer func() {
		d.teardown()
		if err != nil {
			err = fmt.Errorf("%w (daemon logs kept in %s)", err, dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	fmt.Fprintf(out, "zkelect-dev demo: 3 daemons share %d shards on a local 3-node ZooKeeper ensemble.\n", demoShards)
	fmt.Fprintf(out, "Each shard's leader runs a worker that writes to a fenced store with its fencing token.\n\n")
	for _, step := range []func(context.Context) error{d.setup, d.balance, d.killOne, d.pauseOne} {
		if err := step(ctx); err != nil {
			if ctx.Err() != nil {
				d.say("interrupted; stopping everything")
				return nil
			}
			return err
		}
	}
	d.say("stopping daemons, store and ensemble")
	return nil
}

// say prints one timestamped line.
func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, "[%5.1fs] %s\n", time.Since(d.start).Seconds(), fmt.Sprintf(format, args...))
}

// setup starts the ensemble, the store and the daemons.
func (d *demo) setup(ctx context.Context) error {
	d.say("starting a 3-node ZooKeeper ensemble (tick %s)", demoTick)
	zkc, err := testenv.Start(ctx, testenv.Options{Servers: 3, TickTime: demoTick})
	if err != nil {
		return fmt.Errorf("start ZooKeeper (run make deps to install it): %w", err)
	}
	d.zkc = zkc
	d.sess, err = recipe.Connect(ctx, zkc.Addrs(), recipe.WithSessionTimeout(demoSessionTimeout),
		recipe.WithConnectTimeout(10*time.Second), recipe.WithLogger(zerolog.Nop()))
	if err != nil {
		return fmt.Errorf("connect to the demo ensemble: %w", err)
	}
	d.store, err = newFencedStore(prometheus.NewRegistry(), d.onStoreEvent)
	if err != nil {
		return err
	}
	addr, wait, err := cli.ServeHTTP(ctx, "127.0.0.1:0", d.store.handler(prometheus.NewRegistry()))
	if err != nil {
		return err
	}
	d.waitAll = wait
	d.url = "http://" + addr.String()
	d.say("ensemble up at %s; fenced store at %s", zkc.ConnectString(), d.url)
	for _, m := range demoMembers {
		if err := d.startDaemon(m); err != nil {
			return err
		}
	}
	d.say("started daemons a, b, c: zkelect shards --root %s --shards %d --session-timeout %s --exec '<worker>'",
		demoRoot, demoShards, demoSessionTimeout)
	return nil
}

func (d *demo) startDaemon(member string) error {
	worker := fmt.Sprintf("exec %s demo worker --store %s --shard {shard} --token {token}", cli.ShellQuote(d.exe), d.url)
	args := []string{"shards", "--zk", d.zkc.ConnectString(), "--root", demoRoot, "--member", member,
		"--shards", fmt.Sprint(demoShards), "--session-timeout", demoSessionTimeout.String(),
		"--listen", "127.0.0.1:0", "--grace", "1s", "--log-format", "json", "--exec", worker}
	p, err := startDaemonProc(member, d.exe, args, filepath.Join(d.dir, "daemon-"+member+".log"))
	if err != nil {
		return err
	}
	d.daemons[member] = p
	return nil
}

// onStoreEvent counts the store's decisions and queues rejections.
func (d *demo) onStoreEvent(ev storeEvent) {
	if ev.Accepted {
		d.accepted.Add(1)
		return
	}
	d.rejected.Add(1)
	select {
	case d.stale <- ev:
	default:
	}
}

// teardown stops everything setup started; safe on a partial setup.
func (d *demo) teardown() {
	for _, p := range d.daemons {
		p.stop(10 * time.Second)
	}
	d.stopAll()
	_ = d.waitAll()
	if d.sess != nil {
		d.sess.Close()
	}
	if d.zkc != nil {
		d.zkc.Close()
	}
}

// owners reads every shard's leader.
func (d *demo) owners(ctx context.Context) (map[string]partition.Owner, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return partition.Owners(ctx, d.sess, demoRoot)
}

// await polls cond every 100 ms until it holds, for at most demoStepTimeout.
func (d *demo) await(ctx context.Context, what string, cond func(map[string]partition.Owner) bool) (map[string]partition.Owner, error) {
	ctx, cancel := context.WithTimeout(ctx, demoStepTimeout)
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		o, err := d.owners(ctx)
		if err == nil && cond(o) {
			return o, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("demo: timed out waiting for %s: %w", what, errors.Join(ctx.Err(), err))
		case <-t.C:
		}
	}
}
