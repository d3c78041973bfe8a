package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkelect/zkelect/recipe/watchdog"
)

func TestMain(m *testing.M) {
	if code, ok := RunChild(os.Args); ok { // the peers scenario's zkelect candidates
		os.Exit(code)
	}
	if code, ok := watchdog.Serve(os.Args); ok { // their watchdogs
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

// small is a configuration that exercises every scenario in seconds.
func small(t *testing.T, scenarios ...string) Config {
	return Config{
		Scenarios: scenarios, RawTrials: 5, RawCreates: 200, InFlight: 16,
		ResignTrials: 5, CrashTrials: 2, HerdCandidates: 10, HerdTrials: 2,
		Shards: []int{50}, Members: 3, Logf: t.Logf,
	}
}

func TestRunRawFloors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, small(t, ScenarioRaw))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 3 {
		t.Fatalf("got %d results, want 3: %+v", len(rep.Results), rep.Results)
	}
	for _, r := range rep.Results[:2] {
		if r.Dist == nil || r.Dist.N != 5 || r.Dist.P50 <= 0 || r.Dist.Max < r.Dist.P99 {
			t.Errorf("%s: bad distribution %+v", r.Scenario, r.Dist)
		}
	}
	if tp := rep.Results[2]; tp.Value <= 0 || tp.Unit != "creates/s" {
		t.Errorf("throughput row %+v", tp)
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "raw/create throughput") {
		t.Errorf("table lacks the throughput row:\n%s", buf.String())
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatalf("report does not marshal: %v", err)
	}
	t.Logf("\n%s", buf.String())
}

func TestRunRejectsUnknownScenario(t *testing.T) {
	_, err := Run(context.Background(), Config{Scenarios: []string{"nope"}})
	if !errors.Is(err, ErrUnknownScenario) {
		t.Fatalf("err = %v, want ErrUnknownScenario", err)
	}
}

// TestValidateRefusesBadSizes: a negative count or duration, which Run
// once replaced with its default, and a shard count out of range are
// refused with a *ConfigError naming the field, by Validate and by Run
// before it starts anything; zero fields are valid (they take defaults).
func TestValidateRefusesBadSizes(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{CrashTrials: -1}, "CrashTrials"},
		{Config{Members: -3}, "Members"},
		{Config{SessionTimeout: -time.Second}, "SessionTimeout"},
		{Config{TickTime: -time.Millisecond}, "TickTime"},
		{Config{Shards: []int{10, 0}}, "Shards"},
		{Config{Shards: []int{maxShards + 1}}, "Shards"},
		{Config{StepLimit: -time.Second}, "StepLimit"},
		{Config{RoutingSessionTimeout: -time.Second}, "RoutingSessionTimeout"},
		{Config{RoutingSessionTimeout: 1500 * time.Microsecond}, "RoutingSessionTimeout"}, // not whole milliseconds: ZooKeeper's unit
		{Config{FleetShare: -1}, "FleetShare"},
		{Config{FleetShards: []int{15000}}, "FleetShards"},                  // not a multiple of the 10,000 share
		{Config{FleetShards: []int{10000}}, "FleetShards"},                  // one member: nobody to simulate
		{Config{FleetShards: []int{maxFleetShards + 10000}}, "FleetShards"}, // over the cap
		{Config{ShardIDs: "shard"}, "ShardIDs"},                             // no verb: every id the same
		{Config{ShardIDs: "shard-%d-%d"}, "ShardIDs"},                       // two verbs
		{Config{ShardIDs: "tenant/%07d"}, "ShardIDs"},                       // '/' in an id
		{Config{ShardIDs: strings.Repeat("x", 300) + "%d"}, "ShardIDs"},     // longer than MaxIDLength
	} {
		for name, err := range map[string]error{"Validate": tc.cfg.Validate(), "Run": runErr(tc.cfg)} {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, ErrBadConfig) {
				t.Errorf("%s(%+v) = %v, want a *ConfigError for %s wrapping ErrBadConfig", name, tc.cfg, err, tc.field)
			}
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("Validate(Config{}) = %v, want nil: zero fields take the defaults", err)
	}
	if err := (Config{Shards: []int{maxShards}, ShardIDs: "shard-%07d"}).Validate(); err != nil || maxShards < 1000000 {
		t.Errorf("Validate(1,000,000 shards named shard-%%07d) = %v (maxShards %d), want nil: a bucketed root holds them", err, maxShards)
	}
}

// TestRoutingSessionTimeoutByShardCount: unset, the routing scenario's
// session timeout is the run's up to 10,000 shards, then 1 s per 10,000
// shards, at most 20 s, and the ensemble's maximum is raised to the
// longest only when above 20 ticks; set, it is taken as given.
func TestRoutingSessionTimeoutByShardCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		base time.Duration
		want time.Duration
	}{
		{64, time.Second, time.Second}, {10000, time.Second, time.Second}, {10000, 2 * time.Second, 2 * time.Second},
		{20000, time.Second, 2 * time.Second}, {100000, time.Second, 10 * time.Second}, {100000, 15 * time.Second, 15 * time.Second},
		{1000000, time.Second, 20 * time.Second},
	} {
		if got := RoutingSessionTimeoutFor(tc.n, tc.base); got != tc.want {
			t.Errorf("RoutingSessionTimeoutFor(%d, %v) = %v, want %v", tc.n, tc.base, got, tc.want)
		}
	}
	routing := Config{Scenarios: []string{ScenarioRouting}, TickTime: 100 * time.Millisecond, SessionTimeout: time.Second}
	for _, tc := range []struct {
		shards []int
		set    time.Duration
		want   time.Duration
	}{
		{[]int{64, 10000}, 0, 0}, {[]int{64, 100000}, 0, 10 * time.Second}, {[]int{100000}, 3 * time.Second, 3 * time.Second},
		{[]int{100000}, 2 * time.Second, 0}, // 20 ticks: ZooKeeper's own maximum
	} {
		c := routing
		c.RoutingShards, c.RoutingSessionTimeout = tc.shards, tc.set
		if got := c.maxSessionTimeout(); got != tc.want {
			t.Errorf("maxSessionTimeout of %v shards, RoutingSessionTimeout %v = %v, want %v", tc.shards, tc.set, got, tc.want)
		}
	}
	if got := (Config{Scenarios: []string{ScenarioShards}, RoutingShards: []int{100000}, TickTime: 100 * time.Millisecond}).maxSessionTimeout(); got != 0 {
		t.Errorf("maxSessionTimeout without the routing scenario = %v, want 0", got)
	}
}

// runErr is Run's error for a config Run must refuse before starting: its
// context is cancelled, so a Run that accepted cfg fails at once instead.
func runErr(cfg Config) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, cfg)
	if rep != nil {
		return errors.New("Run returned a report")
	}
	return err
}

func TestNewDist(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	d := NewDist(s)
	if d.N != 100 || d.P50 != 50*time.Millisecond || d.P99 != 99*time.Millisecond || d.Max != 100*time.Millisecond {
		t.Fatalf("dist = %+v", d)
	}
	if (NewDist(nil) != Dist{}) {
		t.Fatal("empty sample must give the zero Dist")
	}
}

func TestRunFailover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, small(t, ScenarioFailover))
	if err != nil {
		t.Fatal(err)
	}
	byName := rowsByName(rep)
	resign, crash := byName["failover/resign"], byName["failover/crash"]
	if resign.Dist == nil || resign.Dist.N != 5 || crash.Dist == nil || crash.Dist.N != 2 {
		t.Fatalf("failover rows: %+v", rep.Results)
	}
	// A crashed leader's session must expire before anyone else leads.
	if crash.Dist.P50 < rep.SessionTimeout/2 {
		t.Errorf("failover after crash p50 %s is shorter than half the session timeout %s", crash.Dist.P50, rep.SessionTimeout)
	}
	var buf bytes.Buffer
	_ = rep.WriteTable(&buf)
	t.Logf("\n%s", buf.String())
}

func TestRunHerdAndShards(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, small(t, ScenarioHerd, ScenarioShards))
	if err != nil {
		t.Fatal(err)
	}
	byName := rowsByName(rep)
	logTable(t, rep)
	// No herd: at most the successor is notified. The servers' watch
	// tables are read at an instant, and a successor whose watch was still
	// being armed then counts 0, so an average below 1 is no herd.
	if h := byName["herd/notifications per failover"]; h.Value <= 0 || h.Value > 1 {
		t.Errorf("herd: %v notifications per failover, want at most 1 (only the successor) and some", h.Value)
	}
	if c := byName["shards/cold start 50"]; c.Value <= 0 {
		t.Errorf("cold start row %+v", c)
	}
	join := byName["shards/moves on join (50 shards)"]
	if join.Value < 1 || join.Value > 25 {
		t.Errorf("moves on join = %v for 50 shards and 3 members, want about 12", join.Value)
	}
	if g := byName["shards/goroutines per shard at 50"]; g.Value <= 0 {
		t.Errorf("goroutines per shard row %+v", g)
	}
	if r := byName["shards/requests per election at 50"]; r.Value < 1 {
		t.Errorf("requests per election row %+v: every election sends at least its create", r)
	}
	if w, ok := byName["shards/watches per member at 50"]; !ok || w.Value < 1 {
		t.Errorf("watches per member row %+v: every leader watches its znode", w)
	}
	if d, ok := byName["shards/drain of a member (50 shards)"]; !ok || d.Value <= 0 {
		t.Errorf("drain row %+v, want the time until the drained member led nothing", d)
	}
	if z := byName["shards/znodes at 50"]; z.Value < 100 {
		t.Errorf("znodes row %+v, want at least the 2 znodes a shard (its election and its leader's candidate)", z)
	}
}

// TestRunShardsLargeFleet runs the 1,000,000-shard scenario's steps on 60
// shards named as a user would on a standalone server: a member of the
// cold start crashes, one joins, the server restarts and its snapshot is
// measured, beside the server's memory.
func TestRunShardsLargeFleet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := small(t, ScenarioShards)
	cfg.Shards, cfg.Members, cfg.Servers, cfg.LargeFleet, cfg.ShardIDs = []int{60}, 2, 1, true, "shard-%07d"
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	byName := rowsByName(rep)
	logTable(t, rep)
	if c := byName["shards/led again after a crash (60 shards)"]; c.Value < msf(rep.SessionTimeout)/2 {
		t.Errorf("crash row %+v: a crashed member's shards wait for its session to expire (%s)", c, rep.SessionTimeout)
	}
	if j := byName["shards/moves on join (60 shards)"]; j.Value < 1 || j.Value > 60 || !strings.Contains(j.Note, "balanced again") {
		t.Errorf("join row %+v, want about 30 moves and balanced", j)
	}
	for _, name := range []string{"server JVM heap used", "server RSS", "snapshot", "znodes"} {
		if r := byName["shards/"+name+" at 60"]; r.Value <= 0 {
			t.Errorf("%s row %+v, want a positive figure", name, r)
		}
	}
	if _, ok := byName["shards/moves on leave (60 shards)"]; ok {
		t.Errorf("the large-fleet steps ran a graceful stop too: %+v", rep.Results)
	}
}

// TestRunShardsLargeFleetColdStartCapped: a large fleet's cold start that
// is not balanced by the step limit is reported so, with the shards led by
// then, and the memory rows and the snapshot are still measured; the crash
// and the join, which need a balanced fleet, are not run.
func TestRunShardsLargeFleetColdStartCapped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := small(t, ScenarioShards)
	cfg.Shards, cfg.Members, cfg.Servers, cfg.LargeFleet = []int{2000}, 2, 1, true
	cfg.StepLimit = time.Millisecond // no cold start of 2,000 shards is balanced by then
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	byName := rowsByName(rep)
	logTable(t, rep)
	cold := byName["shards/cold start 2000"]
	if cold.Value != 0 || !strings.Contains(cold.Note, "not balanced after 1ms") || !strings.Contains(cold.Note, "of 2000 shards led") {
		t.Errorf("cold start row %+v, want it not balanced after the 1ms limit, with the shards led by then", cold)
	}
	for _, name := range []string{"znodes at 2000", "snapshot at 2000", "heap per shard at 2000"} {
		if r, ok := byName["shards/"+name]; !ok || r.Value <= 0 {
			t.Errorf("%s row %+v (present %v), want a positive figure", name, r, ok)
		}
	}
	for _, name := range []string{"led again after a crash (2000 shards)", "moves on join (2000 shards)"} {
		if r, ok := byName["shards/"+name]; ok {
			t.Errorf("%s ran after a cold start that never balanced: %+v", name, r)
		}
	}
}

func TestCountWatchers(t *testing.T) {
	out := "/e/_c_a-latch-0000000001\n\t0x100\n\t0x200\n/e\n\t0x300\n/other\n\t0x400\n"
	if n := countWatchers(out, []string{"/e/_c_a-latch-0000000001", "/e"}, 0x100); n != 2 {
		t.Fatalf("countWatchers = %d, want 2", n)
	}
}

// rowsByName indexes a report's rows by scenario name.
func rowsByName(rep *Report) map[string]Result {
	byName := map[string]Result{}
	for _, r := range rep.Results {
		byName[r.Scenario] = r
	}
	return byName
}

// logTable logs a report as the bench prints it.
func logTable(t *testing.T, rep *Report) {
	t.Helper()
	var buf bytes.Buffer
	_ = rep.WriteTable(&buf)
	t.Logf("\n%s", buf.String())
}
