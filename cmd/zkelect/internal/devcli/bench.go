package devcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zkelect/zkelect/bench"
)

func newBenchCmd() *cobra.Command {
	cfg := bench.DefaultConfig()
	var out, cpuProfile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure failover beside kazoo and Curator, herd, cold start, moves and memory on a local ensemble",
		Long: `Starts a local ZooKeeper ensemble (3 servers, --servers) and measures, each beside the
raw ZooKeeper operation that bounds it from below in the same run:
  raw       delete seen by another session's data watch; create round trip;
            ephemeral sequential creates per second on one session
  failover  time to the next leader after a resign and after a crash
            (the leader's connection silenced until its session expires)
  herd      watch notifications per failover with many candidates
  shards    cold start of partition members over each --shards count; moves
            and times when a member joins, stops gracefully and crashes, and
            when an operator drains one (smallest count); heap bytes,
            goroutine stacks and goroutines per shard, and each server's
            znodes, watches, JVM heap in use and RSS (each count); from
            20,000 shards also the sessions per member, the largest
            closeSession transaction (from the leader's dump) beside
            jute.maxbuffer, and, on 3 servers or more, a restart of every
            server after the cold start, a graceful stop and a crash (each
            must load its database). Above 100,000 shards (or with
            --large-fleet) only the cold start, one member's crash, one join
            (each capped by --step-limit) and a restart of the servers for
            their snapshots' size, e.g. 1,000,000 shards on a standalone
            server: --shards 1000000 --members 10 --servers 1
            --shard-ids shard-%07d
  peers     zkelect, kazoo's Election and Curator's LeaderLatch side by side:
            each candidate its own process on its own session, each failover
            timed from the instruction to step down (resign; close and exit;
            SIGKILL) to the successor's own report, p50/p99 and the ratios to
            the floors (delete→watch notification, session-expiry detection)
            and to each other; a library that cannot run is reported missing
  routing   three members and a router (partition/routing, 100 requests/s),
            each its own process, per --routing-shards count: per event class
            (drain, undrain, move, crash, restart within grace, resume after
            expiry) the router's view lag after each new leader's own report,
            the election's time, the delete→notification floor, and misroutes
            per 1,000 requests
  fleetsim  one real member (its own process, its share real elections) in
            a fleet whose other members a driver simulates (their member
            znodes and records), per --fleet-shards size with a
            --fleet-share share each: time to lead its share after it
            joins, its heap, CPU a step and bytes read per change (a
            record write), a rolling restart of simulated members and a
            crash of one; not in the default run
Prints a table; --out also writes the report as JSON. The defaults run in
about five minutes on 2 cores (peers restarts a JVM for every exit and
kill). Needs Java and ZooKeeper, and for peers javac, Curator and
python3-kazoo (make deps).`,
		Example: `  zkelect-dev bench --out bench.json
  zkelect-dev bench --scenarios raw,failover --resign-trials 500
  zkelect-dev bench --scenarios peers --peer-trials 40 --peer-kill-trials 10 --out peers.json
  zkelect-dev bench --scenarios shards --shards 100000 --members 5 --session-timeout 2s
  zkelect-dev bench --scenarios shards --shards 1000000 --members 10 --servers 1 --shard-ids shard-%07d \
    --tick-time 1s --session-timeout 20s --step-limit 15m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkBenchFlags(cmd.Flags(), cfg, out); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			cfg.Logf = func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...) }
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stopProfile()
			return runBench(ctx, cmd.OutOrStdout(), cfg, out)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Scenarios, "scenarios", cfg.Scenarios, "scenarios to run: raw, failover, herd, shards, peers, routing, fleetsim (not in the default run)")
	f.IntSliceVar(&cfg.RoutingShards, "routing-shards", cfg.RoutingShards, "shard counts of the routing scenario")
	f.DurationVar(&cfg.RoutingSessionTimeout, "routing-session-timeout", 0,
		"session timeout of the routing scenario's members and router (default: --session-timeout up to 10,000 shards, then 1s per 10,000 shards, at most 20s)")
	f.IntSliceVar(&cfg.FleetShards, "fleet-shards", cfg.FleetShards, "fleet sizes of the fleetsim scenario (each a multiple of --fleet-share)")
	f.IntVar(&cfg.FleetShare, "fleet-share", cfg.FleetShare, "the fleetsim scenario's real member's share: a fleet has fleet-shards/fleet-share members")
	f.StringVar(&out, "out", "", "write the report as JSON to this file")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write this process's CPU profile (members and bench, not the servers) to this file")
	f.DurationVar(&cfg.SessionTimeout, "session-timeout", cfg.SessionTimeout, "session timeout candidates request")
	f.DurationVar(&cfg.TickTime, "tick-time", cfg.TickTime, "ZooKeeper tickTime")
	f.IntVar(&cfg.RawTrials, "raw-trials", cfg.RawTrials, "trials of each raw latency floor")
	f.IntVar(&cfg.RawCreates, "raw-creates", cfg.RawCreates, "creates in the raw throughput measurement")
	f.IntVar(&cfg.InFlight, "in-flight", cfg.InFlight, "requests in flight in the raw throughput measurement")
	f.IntVar(&cfg.ResignTrials, "resign-trials", cfg.ResignTrials, "failovers after a resign")
	f.IntVar(&cfg.CrashTrials, "crash-trials", cfg.CrashTrials, "failovers after a crash (each takes a session timeout)")
	f.IntVar(&cfg.HerdCandidates, "herd-candidates", cfg.HerdCandidates, "candidates in the herd check")
	f.IntVar(&cfg.HerdTrials, "herd-trials", cfg.HerdTrials, "failovers in the herd check")
	f.IntSliceVar(&cfg.Shards, "shards", cfg.Shards, "shard counts for the cold start")
	f.IntVar(&cfg.Members, "members", cfg.Members, "members starting together")
	f.IntVar(&cfg.MaxHandoffs, "max-handoffs", cfg.MaxHandoffs, "the shards scenario's members' MaxConcurrentHandoffs (unset: partition's default)")
	f.IntVar(&cfg.Servers, "servers", cfg.Servers, "ZooKeeper servers: 1 (standalone), 3 or 5")
	f.StringVar(&cfg.ServerHeap, "server-heap", "", "each ZooKeeper server's -Xmx, such as 6g (default: 128m, 1g from 20,000 shards, 6 KB a shard above 166,666)")
	f.StringVar(&cfg.ShardIDs, "shard-ids", "", `format of the shards' ids with one integer verb, such as shard-%07d (default: 0, 1, 2, ...)`)
	f.DurationVar(&cfg.StepLimit, "step-limit", 0, "cap on the shards scenario's join (and, large-fleet, the cold start's and the restart's): slower is reported as not balanced after it, with the progress by then (default: 3m, or 10ms a shard)")
	f.BoolVar(&cfg.LargeFleet, "large-fleet", false, "shards: only a cold start, a member's crash and a join (always above 100,000 shards)")
	f.IntVar(&cfg.PeerTrials, "peer-trials", cfg.PeerTrials, "failovers per library after resign and after exit (peers)")
	f.IntVar(&cfg.PeerKillTrials, "peer-kill-trials", cfg.PeerKillTrials,
		"failovers per library after SIGKILL, and expiry floor trials (peers; each takes a session timeout)")
	return cmd
}

// benchFlagOf names the flag of each bench.Config field.
var benchFlagOf = map[string]string{
	"Scenarios": "scenarios", "SessionTimeout": "session-timeout", "TickTime": "tick-time",
	"RawTrials": "raw-trials", "RawCreates": "raw-creates", "InFlight": "in-flight",
	"ResignTrials": "resign-trials", "CrashTrials": "crash-trials",
	"HerdCandidates": "herd-candidates", "HerdTrials": "herd-trials", "Shards": "shards", "Members": "members", "MaxHandoffs": "max-handoffs",
	"PeerTrials": "peer-trials", "PeerKillTrials": "peer-kill-trials",
	"Servers": "servers", "ShardIDs": "shard-ids", "StepLimit": "step-limit", "RoutingShards": "routing-shards",
	"RoutingSessionTimeout": "routing-session-timeout",
	"FleetShards":           "fleet-shards", "FleetShare": "fleet-share",
}

// checkBenchFlags refuses, before the run rather than after it, what
// bench.Config.Validate refuses (naming the flag), a count or duration set
// to 0 or an empty --shards (bench.Run would silently take its default),
// and a --out file that cannot be written.
func checkBenchFlags(fs *pflag.FlagSet, cfg bench.Config, out string) error {
	if err := cfg.Validate(); err != nil {
		var ce *bench.ConfigError
		if errors.As(err, &ce) {
			return fmt.Errorf("invalid --%s %v: %s", benchFlagOf[ce.Field], ce.Value, ce.Reason)
		}
		return err // an unknown scenario, named in the message
	}
	if err := zeroBenchFlag(fs); err != nil {
		return err
	}
	if len(cfg.Shards) == 0 {
		return errors.New("invalid --shards: give at least one shard count (e.g. 1000,10000)")
	}
	if out != "" {
		return checkWritable(out)
	}
	return nil
}

// zeroBenchFlag refuses an int or duration flag set to 0, which bench.Run
// reads as "use the default".
func zeroBenchFlag(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		switch v := f.Value.String(); {
		case err != nil:
		case f.Value.Type() == "int" && v == "0":
			err = fmt.Errorf("invalid --%s 0: must be at least 1", f.Name)
		case f.Value.Type() == "duration" && v == "0s":
			err = fmt.Errorf("invalid --%s 0s: must be positive (e.g. 1s)", f.Name)
		}
	})
	return err
}

// checkWritable reports whether a file can be created at path: path is not
// a directory and its directory takes a new file (tried, then removed).
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("invalid --out %s: is a directory; name a file in it", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".zkelect-bench-*")
	if err != nil {
		return fmt.Errorf("invalid --out %s: cannot write there: %w", path, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// runBench runs the benchmark, prints its table on w and writes JSON to
// outPath when set.
func runBench(ctx context.Context, w io.Writer, cfg bench.Config, outPath string) error {
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(w); err != nil {
		return err
	}
	if outPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(outPath, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
