package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

func TestComposeFileIsValid(t *testing.T) {
	if _, err := exec.LookPath("docker-compose"); err != nil {
		t.Fatal("docker-compose not found: run make deps (installs Debian's docker-compose)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker-compose", "-f", "../../../../docker-compose.yml", "config", "-q").CombinedOutput()
	if err != nil {
		t.Fatalf("docker-compose config -q: %v\n%s", err, out)
	}
	out, err = exec.CommandContext(ctx, "docker-compose", "-f", "../../../../docker-compose.yml", "config", "--services").Output()
	if err != nil {
		t.Fatalf("docker-compose config --services: %v", err)
	}
	services := strings.Fields(string(out))
	for _, want := range []string{"zk1", "zk2", "zk3", "zkelect-a", "zkelect-b", "zkelect-c", "store", "prometheus", "grafana"} {
		if !slices.Contains(services, want) {
			t.Errorf("docker-compose.yml has no service %q (has %v)", want, services)
		}
	}
	prom, err := os.ReadFile("../../../../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	targets := regexp.MustCompile(`"([a-z0-9-]+):[0-9]+"`).FindAllStringSubmatch(string(prom), -1)
	if len(targets) == 0 {
		t.Fatal("deploy/prometheus/prometheus.yml scrapes nothing")
	}
	for _, m := range targets {
		if !slices.Contains(services, m[1]) {
			t.Errorf("Prometheus scrapes %s, which is not a docker-compose service", m[0])
		}
	}
}

// recordingRegisterer remembers every collector registered through it.
type recordingRegisterer struct {
	prometheus.Registerer
	collectors []prometheus.Collector
}

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return r.Registerer.Register(c)
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// names returns the metric family names of every recorded collector,
// including vectors that have no series yet.
func (r *recordingRegisterer) names() map[string]bool {
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	out := map[string]bool{}
	for _, c := range r.collectors {
		ch := make(chan *prometheus.Desc, 64)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fq.FindStringSubmatch(d.String()); m != nil {
				out[m[1]] = true
			}
		}
	}
	return out
}

// TestDashboardUsesOnlyExportedMetrics builds the daemon's and the demo
// store's collectors as `zkelect shards` and `zkelect demo store` do, and
// checks that every metric the Grafana dashboard queries is among them.
func TestDashboardUsesOnlyExportedMetrics(t *testing.T) {
	rec := &recordingRegisterer{Registerer: prometheus.NewRegistry()}
	newDaemonMetrics(rec, "m1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithMetrics(rec))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := partition.NewManager(sess, testPath(t), partition.Config{MemberID: "m1", Shards: partition.Range(0, 2), Metrics: rec}); err != nil {
		t.Fatal(err)
	}
	if _, err := zxidfence.NewMetrics(rec); err != nil { // the demo store's collectors
		t.Fatal(err)
	}
	exported := rec.names()

	metric := regexp.MustCompile(`\bzkelect_[a-z0-9_]+`)
	used := 0
	for _, p := range readDashboard(t) {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, name := range metric.FindAllString(tg.Expr, -1) {
				used++
				if !exported[name] && !exported[histogramFamily(name)] {
					t.Errorf("panel %q queries %s, which the daemon does not export", p.Title, name)
				}
			}
		}
	}
	if used == 0 {
		t.Fatal("the dashboard queries no zkelect metric")
	}
	for _, want := range []string{"zkelect_partition_shards_led", "zkelect_session_state", "zkelect_fence_rejected_total", "zkelect_partition_handoff_seconds"} {
		if !exported[want] {
			t.Errorf("expected the daemon to export %s; it exports %v", want, exported)
		}
	}
}

// dashboardPanel is a panel of the Grafana dashboard with its queries.
type dashboardPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// readDashboard decodes the panels of the Grafana dashboard.
func readDashboard(t *testing.T) []dashboardPanel {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard JSON %s: %v", dashboardFile, err)
	}
	return dash.Panels
}

// histogramFamily strips a histogram series suffix.
func histogramFamily(name string) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := strings.CutSuffix(name, s); ok {
			return f
		}
	}
	return name
}
