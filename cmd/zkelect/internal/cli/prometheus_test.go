package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
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
// every second by a real Prometheus that loads deploy/prometheus/alerts.yml;
// nothing requests /readyz. The Grafana dashboard's panels must read the
// fleet's values, not only return series: 12 shards led, 3 members ready,
// 4 leaders and a share of 4 each; after m1 is drained a share of 0 for
// m1 and 6 for the others; after m2 is killed 2 members ready and the
// member-down alert pending. Between them m3 is paused past its session
// timeout (its workers, left running, are refused as stale once the new
// leaders write) and resumed: it counts its lost leaderships as expired,
// not suspended. Then every query of the dashboard must return series,
// leadership starts, failovers and handoffs must have moved, every
// alerting rule must evaluate without error, the fencing alert must fire
// and the no-leader alert must have been pending during the pause.
func TestDashboardAndAlertsAgainstPrometheus(t *testing.T) {
	const n = 12
	s := testSession(t)
	root := testPath(t)
	store := startDemoStore(t)
	work := "exec " + zkelectDevBin + " demo worker --store http://" + store + " --shard {shard} --token {token} --every 50ms"
	ds := map[string]*daemon{}
	var targets []string
	for _, m := range []string{"m1", "m2", "m3"} {
		ds[m] = startDaemonWith(t, root, m, n, []string{"--exec", work, "--session-timeout", promSessionTimeout.String(),
			"--grace", "1s", "--restart-grace", "1s"})
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
	panels := dashboardPanels(t)
	panels.await(t, prom, "Shards led", 0, byMember{"": n})
	panels.await(t, prom, "Members ready", 0, byMember{"": 3})
	panels.await(t, prom, "Leaders per member", 0, byMember{"m1": 4, "m2": 4, "m3": 4})
	panels.await(t, prom, "Weight vs leads per member", 1, byMember{"m1": 4, "m2": 4, "m3": 4})
	before := movementCounts(t, prom)

	runVerbCLI(t, root, "drain", "--member", "m1", "--wait")
	panels.await(t, prom, "Drained members and freeze", 0, byMember{"m1": 1, "m2": 0, "m3": 0})
	panels.await(t, prom, "Weight vs leads per member", 1, byMember{"m1": 0, "m2": 6, "m3": 6})
	panels.await(t, prom, "Leaders per member", 0, byMember{"m1": 0, "m2": 6, "m3": 6})
	panels.await(t, prom, "Members ready", 0, byMember{"": 3})

	ds["m3"].signal(syscall.SIGSTOP)
	eventually(t, promSessionTimeout+20*time.Second, "m3's shards taken over by m2", func() bool {
		return leadCounts(owners(t, s, root))["m2"] == n
	})
	awaitValue(t, prom, "a stale write refused by the store", `sum(zkelect_fence_rejected_total{reason="stale"}) > 0`, math.NaN())
	ds["m3"].signal(syscall.SIGCONT)
	eventually(t, 4*promSessionTimeout+20*time.Second, "m3 back, 12 shards balanced over m2, m3", func() bool {
		return balanced(owners(t, s, root), n, "m2", "m3")
	})
	checkLossesExpired(t, ds["m3"])

	ds["m2"].kill()
	panels.await(t, prom, "Members ready", 0, byMember{"": 2})
	awaitValue(t, prom, "the member-down alert pending for m2", `count(ALERTS{alertname="ZkelectMemberDown", member="m2"})`, 1)
	eventually(t, promSessionTimeout+20*time.Second, "m2's shards taken over by m3", func() bool {
		return leadCounts(owners(t, s, root))["m3"] == n
	})
	panels.await(t, prom, "Weight vs leads per member", 1, byMember{"m1": 0, "m3": n})
	panels.await(t, prom, "Shards led", 0, byMember{"": n})
	checkMovement(t, prom, before)
	checkDashboardQueries(t, prom)
	checkAlertRules(t, prom)
}

// checkLossesExpired: a daemon resumed after a pause past its session
// timeout counts its shards' lost leaderships (zkelect_leadership_lost_total)
// as session_expired, not suspended: its session had expired.
func checkLossesExpired(t *testing.T, d *daemon) {
	t.Helper()
	code, body := d.get(t, "/metrics")
	if code != 200 {
		t.Fatalf("GET %s/metrics: %d", d.url, code)
	}
	lost := map[string]float64{}
	re := regexp.MustCompile(`(?m)^zkelect_leadership_lost_total\{[^}]*reason="([a-z_]+)"[^}]*\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		lost[m[1]] += v
	}
	if lost["session_expired"] == 0 || lost["suspended"] != 0 {
		t.Errorf("%s after a pause past its session timeout: zkelect_leadership_lost_total by reason %v, want session_expired and no suspended", d.member, lost)
	}
}

// byMember is a panel query's value per series, keyed by its member label
// ("" for a series without one).
type byMember map[string]float64

// panelsByTitle are the dashboard's panels by title.
type panelsByTitle map[string]dashboardPanel

func dashboardPanels(t *testing.T) panelsByTitle {
	t.Helper()
	out := panelsByTitle{}
	for _, p := range readDashboard(t) {
		out[p.Title] = p
	}
	return out
}

// await waits until query target of the panel titled title returns
// exactly want (one series per key, each within 1e-9).
func (ps panelsByTitle) await(t *testing.T, prom *testenv.Prometheus, title string, target int, want byMember) {
	t.Helper()
	p, ok := ps[title]
	if !ok || target >= len(p.Targets) {
		t.Fatalf("the dashboard has no panel %q with a query %d", title, target)
	}
	expr := p.Targets[target].Expr
	var last string
	eventually(t, 60*time.Second, fmt.Sprintf("panel %q to read %v", title, want), func() bool {
		got, err := prom.Query(t.Context(), expr, time.Time{})
		last = fmt.Sprint(got, err)
		if err != nil || len(got) != len(want) {
			return false
		}
		for _, s := range got {
			w, ok := want[s.Metric["member"]]
			if !ok || math.Abs(s.Value-w) > 1e-9 {
				return false
			}
		}
		return true
	})
	t.Logf("panel %q: %s", title, last)
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
