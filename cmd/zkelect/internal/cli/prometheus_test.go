package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// Paths of what Prometheus and Grafana load, relative to this package.
const (
	dashboardFile  = "../../../../deploy/grafana/dashboards/zkelect.json"
	alertRulesFile = "../../../../deploy/prometheus/alerts.yml"
	alertTestsFile = "../../../../deploy/prometheus/alerts_test.yml"
)

// promSessionTimeout is the daemons' session timeout in the Prometheus
// test: a paused member's shards stay unled (as Prometheus sees it) for
// most of it, long enough for several rule evaluations.
const promSessionTimeout = 5 * time.Second

// TestDashboardAndAlertsAgainstPrometheus runs three `zkelect shards`
// daemons whose shard workers write to the fenced demo store, scraped
// every second by a real Prometheus that loads deploy/prometheus/alerts.yml.
// One daemon is paused past its session timeout (its workers, left
// running, are refused as stale once the new leaders write) and resumed
// (it rejoins and shards are handed back to it). Then every query of the
// Grafana dashboard must return series, leadership starts, failovers and
// handoffs must have moved, every alerting rule must evaluate without
// error, the fencing alert must fire and the no-leader alert must have
// been pending during the pause.
func TestDashboardAndAlertsAgainstPrometheus(t *testing.T) {
	const n = 12
	s := testSession(t)
	root := testPath(t)
	store := startDemoStore(t)
	work := "exec " + zkelectDevBin + " demo worker --store http://" + store + " --shard {shard} --token {token} --every 50ms"
	ds := map[string]*daemon{}
	var targets []string
	for _, m := range []string{"m1", "m2", "m3"} {
		ds[m] = startDaemonWith(t, root, m, n, []string{"--exec", work, "--session-timeout", promSessionTimeout.String(), "--grace", "1s"})
		targets = append(targets, strings.TrimPrefix(ds[m].url, "http://"))
	}
	prom := testenv.StartPrometheus(t, testenv.PrometheusOptions{
		Jobs:      map[string][]string{"zkelect": targets, "zkelect-store": {store}},
		RuleFiles: []string{alertRulesFile},
	})
	eventually(t, 30*time.Second, "12 shards balanced over m1, m2, m3", func() bool {
		return balanced(owners(t, s, root), n, "m1", "m2", "m3")
	})
	awaitValue(t, prom, "Prometheus scraping all four targets", `sum(up)`, 4)
	awaitValue(t, prom, "Prometheus seeing all 12 shards led", `sum(zkelect_partition_shards_led)`, n)
	before := movementCounts(t, prom)

	ds["m3"].signal(syscall.SIGSTOP)
	eventually(t, promSessionTimeout+20*time.Second, "m3's shards taken over by m1 and m2", func() bool {
		c := leadCounts(owners(t, s, root))
		return c["m1"]+c["m2"] == n
	})
	awaitValue(t, prom, "a stale write refused by the store", `sum(zkelect_fence_rejected_total{reason="stale"}) > 0`, math.NaN())
	ds["m3"].signal(syscall.SIGCONT)
	eventually(t, 4*promSessionTimeout+20*time.Second, "m3 back, 12 shards balanced over m1, m2, m3", func() bool {
		return balanced(owners(t, s, root), n, "m1", "m2", "m3")
	})
	awaitValue(t, prom, "Prometheus seeing m3 lead again", `sum(zkelect_partition_shards_led{member="m3"}) > 0`, math.NaN())
	checkMovement(t, prom, before)
	checkDashboardQueries(t, prom)
	checkAlertRules(t, prom)
}

// startDemoStore runs `zkelect demo store` on a free port and returns its
// host:port.
func startDemoStore(t *testing.T) string {
	t.Helper()
	p := startProc(t, "demo store", []string{"demo", "store", "--listen", "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := p.waitStdout(ctx, "\n")
	addr, ok := strings.CutPrefix(strings.TrimSpace(out), "fenced store listening on http://")
	if !ok {
		t.Fatalf("demo store printed %q", out)
	}
	return addr
}

// awaitValue polls expr until it returns one sample equal to want (any
// value when want is NaN).
func awaitValue(t *testing.T, prom *testenv.Prometheus, what, expr string, want float64) {
	t.Helper()
	var last string
	eventually(t, 30*time.Second, what+" ("+expr+")", func() bool {
		got, err := prom.Query(t.Context(), expr, time.Time{})
		last = fmt.Sprint(got, err)
		return err == nil && len(got) == 1 && (math.IsNaN(want) || got[0].Value == want)
	})
	t.Logf("%s: %s = %s", what, expr, last)
}

// movementQueries are the counters that a failover and a rejoin must move.
var movementQueries = map[string]string{
	"leadership starts": `sum(zkelect_partition_leaderships_started_total)`,
	"failovers":         `sum(zkelect_partition_failover_seconds_count)`,
	"handoffs":          `sum(zkelect_partition_handoff_seconds_count)`,
	"leaderships lost":  `sum(zkelect_partition_leaderships_stopped_total)`,
}

func movementCounts(t *testing.T, prom *testenv.Prometheus) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for what, expr := range movementQueries {
		got, err := prom.Query(t.Context(), expr, time.Time{})
		switch {
		case err != nil:
			t.Fatal(err)
		case len(got) == 1:
			out[what] = got[0].Value
		}
	}
	return out
}

// checkMovement waits for every movement counter to rise above before.
func checkMovement(t *testing.T, prom *testenv.Prometheus, before map[string]float64) {
	t.Helper()
	for what, expr := range movementQueries {
		awaitValue(t, prom, what+" moved", fmt.Sprintf("%s > %g", expr, before[what]), math.NaN())
	}
}

// checkDashboardQueries evaluates every query of every panel and fails
// for one that errs, or that returns no series within 30 s of the
// failover: a rate() over a counter whose series the failover created
// needs a second scrape of it, which a loaded machine may not have made
// yet when the failover is seen.
func checkDashboardQueries(t *testing.T, prom *testenv.Prometheus) {
	t.Helper()
	queries := 0
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range readDashboard(t) {
		for _, tg := range p.Targets {
			queries++
			for {
				got, err := prom.Query(t.Context(), tg.Expr, time.Time{})
				if err != nil {
					t.Errorf("panel %q: %v", p.Title, err)
					break
				}
				if len(got) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("panel %q: %s returns no series 30s after a failover", p.Title, tg.Expr)
					break
				}
				time.Sleep(200 * time.Millisecond) // Prometheus is polled: it scrapes on its own schedule
			}
		}
	}
	t.Logf("%d dashboard queries evaluated in Prometheus", queries)
}

// alertName finds the alerting rules' names in a rules file.
var alertName = regexp.MustCompile(`(?m)^\s*- alert:\s*(\S+)`)

// checkAlertRules: Prometheus loaded every alert of the rules file and
// evaluated each without error, every zkelect metric a rule names exists,
// the fencing alert fires after the stale writes, and the no-leader alert
// was pending while the paused member's shards were unled.
func checkAlertRules(t *testing.T, prom *testenv.Prometheus) {
	t.Helper()
	b, err := os.ReadFile(alertRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range alertName.FindAllStringSubmatch(string(b), -1) {
		want = append(want, m[1])
	}
	var rules []testenv.Rule
	eventually(t, 30*time.Second, "every rule evaluated", func() bool {
		rules, err = prom.Rules(t.Context())
		return err == nil && len(rules) > 0 && !slices.ContainsFunc(rules, func(r testenv.Rule) bool { return r.Health == "unknown" })
	})
	var loaded []string
	for _, r := range rules {
		loaded = append(loaded, r.Name)
		if r.Health != "ok" {
			t.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
		}
		for _, name := range regexp.MustCompile(`\bzkelect_[a-z0-9_]+`).FindAllString(r.Query, -1) {
			if got, err := prom.Query(t.Context(), fmt.Sprintf(`count({__name__=%q})`, name), time.Time{}); err != nil || len(got) == 0 {
				t.Errorf("rule %s uses %s, which Prometheus has no series of (%v)", r.Name, name, err)
			}
		}
	}
	if !slices.Equal(loaded, want) {
		t.Errorf("Prometheus loaded rules %v; %s has %v", loaded, alertRulesFile, want)
	}
	awaitValue(t, prom, "the fencing alert firing", `count(ALERTS{alertname="ZkelectFencingRejections", alertstate="firing", reason="stale"})`, math.NaN())
	if got, err := prom.Query(t.Context(), `max_over_time(ALERTS{alertname="ZkelectShardWithoutLeader"}[5m])`, time.Time{}); err != nil || len(got) == 0 {
		t.Errorf("ZkelectShardWithoutLeader was never pending while m3 was paused (%v, %v)", got, err)
	}
}

// TestAlertRulesUnitTests checks alerts.yml with promtool and runs its
// unit tests (alerts_test.yml), which fire each alert on the condition it
// describes and keep it quiet just short of it.
func TestAlertRulesUnitTests(t *testing.T) {
	promtool, err := testenv.Promtool()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, args := range [][]string{{"check", "rules", alertRulesFile}, {"test", "rules", alertTestsFile}} {
		if out, err := exec.CommandContext(ctx, promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
