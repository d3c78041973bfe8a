package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// Scenario names accepted in Config.Scenarios.
const (
	ScenarioRaw      = "raw"      // raw floors: notify, create round trip, create throughput
	ScenarioFailover = "failover" // failover after resign and after crash
	ScenarioHerd     = "herd"     // notifications per failover with many candidates
	ScenarioShards   = "shards"   // cold start, join/leave moves, memory per shard
	ScenarioPeers    = "peers"    // zkelect, kazoo and Curator side by side, each candidate a process
	ScenarioRouting  = "routing"  // a router's view lag per event class, members and router as processes
	ScenarioFleetSim = "fleetsim" // one real member among simulated ones: its cost as the fleet grows (not in the default run)
)

// AllScenarios lists every scenario in the order Run runs them.
var AllScenarios = []string{ScenarioRaw, ScenarioFailover, ScenarioHerd, ScenarioShards, ScenarioPeers, ScenarioRouting, ScenarioFleetSim}

// defaultScenarios are those an empty Config.Scenarios runs: all but the
// fleet simulation, which needs minutes and gigabytes of its own.
var defaultScenarios = []string{ScenarioRaw, ScenarioFailover, ScenarioHerd, ScenarioShards, ScenarioPeers, ScenarioRouting}

// Errors Run returns for a bad Config, before starting anything.
var (
	// ErrUnknownScenario reports a scenario name Run does not know.
	ErrUnknownScenario = errors.New("bench: unknown scenario")
	// ErrBadConfig reports a size out of range; the error is a
	// *ConfigError naming the field.
	ErrBadConfig = errors.New("bench: invalid config")
)

// ConfigError reports a Config field out of range, as Config.Validate and
// Run return it. errors.Is(err, ErrBadConfig) holds for it.
type ConfigError struct {
	Field  string // the Config field, such as "CrashTrials"
	Value  any    // the refused value (for Shards, the refused entry)
	Reason string // what is wrong with it, such as "negative"
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s = %v: %s", ErrBadConfig, e.Field, e.Value, e.Reason)
}

// Is reports whether target is ErrBadConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrBadConfig }

// maxShards caps a shard count of the cold start: the 1,000,000 a
// bucketed root holds (partition's doc, "Buckets and older releases").
const maxShards = 1000000

// maxFleetShards caps a fleet of the fleet simulation, whose driver writes
// records rather than elections.
const maxFleetShards = 10000000

// Config selects scenarios and sizes. Zero fields take the documented
// defaults (DefaultConfig).
type Config struct {
	// Scenarios to run, from AllScenarios; empty runs all.
	Scenarios []string `json:"scenarios"`
	// Servers in the ensemble (default 3) and their tickTime (default
	// 100ms).
	Servers  int           `json:"servers"`
	TickTime time.Duration `json:"tick_time_ns"`
	// SessionTimeout candidates request (default 1s); it bounds the
	// failover after a crash.
	SessionTimeout time.Duration `json:"session_timeout_ns"`
	// RawTrials for the notify and create round-trip floors (default 200);
	// RawCreates and InFlight for the create throughput (default 10000,
	// 128).
	RawTrials  int `json:"raw_trials"`
	RawCreates int `json:"raw_creates"`
	InFlight   int `json:"in_flight"`
	// ResignTrials and CrashTrials: failovers measured (default 200, 20).
	ResignTrials int `json:"resign_trials"`
	CrashTrials  int `json:"crash_trials"`
	// HerdCandidates each on its own session (default 100), HerdTrials
	// failovers (default 5).
	HerdCandidates int `json:"herd_candidates"`
	HerdTrials     int `json:"herd_trials"`
	// Shards lists the shard counts for the cold start (default 1000 and
	// 10000); Members is how many members start together (default 3).
	// Moves are measured at the smallest count, memory at each.
	Shards  []int `json:"shards"`
	Members int   `json:"members"`
	// MaxHandoffs is the shards scenario's members' MaxConcurrentHandoffs
	// (0: partition's default).
	MaxHandoffs int `json:"max_handoffs"`
	// ShardIDs is the fmt format of the i-th shard's id, with one integer
	// verb, such as "shard-%07d"; empty: the decimal numbers
	// partition.Range gives ("0", "1", …). Each id must pass
	// partition.ValidateID.
	ShardIDs string `json:"shard_ids,omitempty"`
	// StepLimit caps the wait of the shards scenario's join (a slow join
	// is reported as not balanced after StepLimit, and the scenario goes
	// on), and with the large-fleet steps also the cold start's and the
	// restart's (a cold start not balanced by then is reported with the
	// shards led by then, and only the memory rows and the snapshot step
	// follow); zero: the convergence bound of every other step (3
	// minutes, or 10 ms a shard above 18,000 shards).
	StepLimit time.Duration `json:"step_limit_ns,omitempty"`
	// LargeFleet runs the shards scenario's large-fleet steps at every
	// shard count (they run above 100,000 shards anyway): one member of
	// the cold start crashes, another joins, and the servers restart for
	// their snapshots (no graceful stop, drain or second cold start).
	LargeFleet bool `json:"large_fleet,omitempty"`
	// ServerHeap is each ZooKeeper server's -Xmx (Java notation, such as
	// "6g"); empty: testenv's default, 1g from 20,000 shards, and 6 KB a
	// shard from 200,000 (serverHeap).
	ServerHeap string `json:"server_heap,omitempty"`
	// PeerTrials: failovers per library after a resign and after an exit
	// in the peers scenario (default 40); PeerKillTrials after a SIGKILL,
	// each waiting out a session timeout, and trials of the expiry floor
	// (default 10).
	PeerTrials     int `json:"peer_trials"`
	PeerKillTrials int `json:"peer_kill_trials"`
	// RoutingShards lists the shard counts of the routing scenario
	// (default 64).
	RoutingShards []int `json:"routing_shards,omitempty"`
	// RoutingSessionTimeout is the session timeout of the routing
	// scenario's members and router; zero: chosen by shard count
	// (RoutingSessionTimeoutFor). The ensemble's maximum session timeout
	// is raised to it when it is above 20 ticks.
	RoutingSessionTimeout time.Duration `json:"routing_session_timeout_ns,omitempty"`
	// FleetShards lists the fleet sizes of the fleet simulation
	// (ScenarioFleetSim; default 100,000 and 1,000,000, at most
	// 10,000,000), each a multiple of FleetShare: the real member's share
	// (default 10,000), so a fleet has FleetShards/FleetShare members.
	FleetShards []int `json:"fleet_shards,omitempty"`
	FleetShare  int   `json:"fleet_share,omitempty"`
	// ChildCommand runs this package's zkelect candidate (RunChild) in the
	// peers scenario, ChildArg and its arguments appended; default: this
	// executable, which must then call RunChild first in main.
	ChildCommand []string `json:"-"`
	// Logf receives progress lines; optional.
	Logf func(format string, args ...any) `json:"-"`
}

// DefaultConfig returns the defaults `zkelect bench` runs with.
func DefaultConfig() Config {
	return Config{
		Scenarios: slices.Clone(defaultScenarios), Servers: 3, TickTime: 100 * time.Millisecond,
		SessionTimeout: time.Second, RawTrials: 200, RawCreates: 10000, InFlight: 128,
		ResignTrials: 200, CrashTrials: 20, HerdCandidates: 100, HerdTrials: 5,
		Shards: []int{1000, 10000}, Members: 3, PeerTrials: 40, PeerKillTrials: 10,
		RoutingShards: []int{64}, FleetShards: []int{100000, 1000000}, FleetShare: 10000,
	}
}

// Validate returns the error Run would return for c before starting
// anything, or nil: an error wrapping ErrUnknownScenario for a name not in
// AllScenarios, a *ConfigError for a negative count or duration (zero takes
// the default), a shard count outside 1..1000000, or a ShardIDs format
// that does not give distinct valid ids.
func (c Config) Validate() error {
	for _, s := range c.Scenarios {
		if !slices.Contains(AllScenarios, s) {
			return fmt.Errorf("%w %q (known: %s)", ErrUnknownScenario, s, strings.Join(AllScenarios, ", "))
		}
	}
	counts := []struct {
		field string
		n     int
	}{
		{"Servers", c.Servers}, {"RawTrials", c.RawTrials}, {"RawCreates", c.RawCreates}, {"InFlight", c.InFlight},
		{"ResignTrials", c.ResignTrials}, {"CrashTrials", c.CrashTrials},
		{"HerdCandidates", c.HerdCandidates}, {"HerdTrials", c.HerdTrials}, {"Members", c.Members}, {"MaxHandoffs", c.MaxHandoffs},
		{"PeerTrials", c.PeerTrials}, {"PeerKillTrials", c.PeerKillTrials},
	}
	for _, f := range counts {
		if f.n < 0 {
			return &ConfigError{Field: f.field, Value: f.n, Reason: "negative"}
		}
	}
	switch {
	case c.TickTime < 0:
		return &ConfigError{Field: "TickTime", Value: c.TickTime, Reason: "negative"}
	case c.SessionTimeout < 0:
		return &ConfigError{Field: "SessionTimeout", Value: c.SessionTimeout, Reason: "negative"}
	case c.StepLimit < 0:
		return &ConfigError{Field: "StepLimit", Value: c.StepLimit, Reason: "negative"}
	case c.RoutingSessionTimeout < 0 || c.RoutingSessionTimeout%time.Millisecond != 0:
		return &ConfigError{Field: "RoutingSessionTimeout", Value: c.RoutingSessionTimeout, Reason: "want whole milliseconds, or 0 to choose by shard count"}
	}
	if err := checkShardIDs(c.ShardIDs); err != nil {
		return err
	}
	for _, n := range c.Shards {
		if n < 1 || n > maxShards {
			return &ConfigError{Field: "Shards", Value: n, Reason: fmt.Sprintf("each shard count must be 1..%d", maxShards)}
		}
	}
	for _, n := range c.RoutingShards {
		if n < 1 || n > maxShards {
			return &ConfigError{Field: "RoutingShards", Value: n, Reason: fmt.Sprintf("each shard count must be 1..%d", maxShards)}
		}
	}
	return c.validateFleet()
}

// validateFleet checks the fleet simulation's sizes: a positive share,
// each fleet a multiple of it (every member's share the same) with two
// members at least, and at most maxFleetShards.
func (c Config) validateFleet() error {
	if c.FleetShare < 0 {
		return &ConfigError{Field: "FleetShare", Value: c.FleetShare, Reason: "negative"}
	}
	share := c.FleetShare
	if share == 0 {
		share = DefaultConfig().FleetShare
	}
	for _, n := range c.FleetShards {
		if n < 2*share || n > maxFleetShards || n%share != 0 {
			return &ConfigError{Field: "FleetShards", Value: n,
				Reason: fmt.Sprintf("each fleet must be a multiple of the share %d, from twice it to %d", share, maxFleetShards)}
		}
	}
	return nil
}

// withDefaults validates c and fills its zero fields from DefaultConfig.
func (c Config) withDefaults() (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	d := DefaultConfig()
	if len(c.Scenarios) == 0 {
		c.Scenarios = d.Scenarios
	}
	def := func(v *int, dv int) {
		if *v == 0 {
			*v = dv
		}
	}
	def(&c.Servers, d.Servers)
	def(&c.RawTrials, d.RawTrials)
	def(&c.RawCreates, d.RawCreates)
	def(&c.InFlight, d.InFlight)
	def(&c.ResignTrials, d.ResignTrials)
	def(&c.CrashTrials, d.CrashTrials)
	def(&c.HerdCandidates, d.HerdCandidates)
	def(&c.HerdTrials, d.HerdTrials)
	def(&c.Members, d.Members)
	def(&c.PeerTrials, d.PeerTrials)
	def(&c.PeerKillTrials, d.PeerKillTrials)
	if c.TickTime == 0 {
		c.TickTime = d.TickTime
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = d.SessionTimeout
	}
	if len(c.Shards) == 0 {
		c.Shards = d.Shards
	}
	if len(c.RoutingShards) == 0 {
		c.RoutingShards = d.RoutingShards
	}
	if len(c.FleetShards) == 0 {
		c.FleetShards = d.FleetShards
	}
	def(&c.FleetShare, d.FleetShare)
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c, nil
}

// Run starts a local ensemble, runs the selected scenarios and returns their
// results. ctx bounds the whole run. It returns Validate's error for a bad
// Config, testenv's errors when the ensemble cannot start, or the first
// scenario's error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	heap := cfg.ServerHeap
	if heap == "" {
		heap = testenv.DefaultHeap
		if slices.Contains(cfg.Scenarios, ScenarioShards) {
			heap = serverHeap(slices.Max(cfg.Shards))
		}
		if slices.Contains(cfg.Scenarios, ScenarioFleetSim) && heap == testenv.DefaultHeap {
			heap = boundHeap // the simulated members' records: about 60 KB each
		}
		if slices.Contains(cfg.Scenarios, ScenarioRouting) && heap == testenv.DefaultHeap {
			heap = serverHeap(slices.Max(cfg.RoutingShards))
		}
	}
	cluster, err := testenv.Start(ctx, testenv.Options{Servers: cfg.Servers, TickTime: cfg.TickTime, Heap: heap,
		MaxSessionTimeout: cfg.maxSessionTimeout()})
	if err != nil {
		return nil, fmt.Errorf("bench: start ensemble: %w", err)
	}
	defer cluster.Close()
	e := &env{cluster: cluster, sessionTimeout: cfg.SessionTimeout, maxHandoffs: cfg.MaxHandoffs, logf: cfg.Logf, shardIDs: cfg.ShardIDs, stepLimit: cfg.StepLimit}
	rep := &Report{Machine: ThisMachine(), Config: cfg, SessionTimeout: cfg.SessionTimeout}
	steps := map[string]func(context.Context, Config, *Report) error{
		ScenarioRaw: e.runRaw, ScenarioFailover: e.runFailover,
		ScenarioHerd: e.runHerd, ScenarioShards: e.runShards, ScenarioPeers: e.runPeers,
		ScenarioRouting: e.runRouting, ScenarioFleetSim: e.runFleetSim,
	}
	for _, name := range AllScenarios {
		if !slices.Contains(cfg.Scenarios, name) {
			continue
		}
		cfg.Logf("bench: %s", name)
		if err := steps[name](ctx, cfg, rep); err != nil {
			return nil, fmt.Errorf("bench: scenario %s: %w", name, err)
		}
	}
	rep.Elapsed = time.Since(begin)
	return rep, nil
}

// floors are the raw measurements other rows are compared with; they are
// measured once per run, by whichever scenario needs them first.
type floors struct {
	notify, create *Dist
	throughput     float64
}

func (e *env) runRaw(ctx context.Context, cfg Config, rep *Report) error {
	f, err := e.floors(ctx, cfg)
	if err != nil {
		return err
	}
	rep.Results = append(rep.Results,
		Result{Scenario: "raw/delete→watch", Dist: f.notify, Note: "delete on one session, data watch fires on another"},
		Result{Scenario: "raw/create round trip", Dist: f.create, Note: "one ephemeral sequential create"},
		Result{Scenario: "raw/create throughput", Value: f.throughput, Unit: "creates/s",
			Note: fmt.Sprintf("one session, %d in flight, %d creates", cfg.InFlight, cfg.RawCreates)},
	)
	return nil
}

// floors measures the raw floors once per env.
func (e *env) floors(ctx context.Context, cfg Config) (*floors, error) {
	if e.raw != nil {
		return e.raw, nil
	}
	notify, err := e.rawNotify(ctx, cfg.RawTrials)
	if err != nil {
		return nil, err
	}
	create, err := e.rawCreate(ctx, cfg.RawTrials)
	if err != nil {
		return nil, err
	}
	tp, err := e.rawThroughput(ctx, cfg.RawCreates, cfg.InFlight)
	if err != nil {
		return nil, err
	}
	e.raw = &floors{notify: &notify, create: &create, throughput: tp}
	return e.raw, nil
}
