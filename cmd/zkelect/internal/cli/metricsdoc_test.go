package cli

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/partition/routing"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// metricsDocFile holds the list of exported metrics (its "Metrics" table).
const metricsDocFile = "../../../../deploy/README.md"

// documentedMetric is a row of the metrics table.
type documentedMetric struct {
	kind, labels, meaning string
}

// readMetricsDoc decodes the rows "| `name` | type | labels | meaning |"
// of deploy/README.md's metrics table.
func readMetricsDoc(t *testing.T) map[string]documentedMetric {
	t.Helper()
	b, err := os.ReadFile(metricsDocFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]documentedMetric{}
	row := regexp.MustCompile("(?m)^\\| `(zkelect_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\| ([^|]*) \\| (.*) \\|$")
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		if _, dup := out[m[1]]; dup {
			t.Errorf("%s lists %s twice", metricsDocFile, m[1])
		}
		out[m[1]] = documentedMetric{kind: m[2], labels: strings.TrimSpace(m[3]), meaning: m[4]}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no metrics table", metricsDocFile)
	}
	return out
}

// exportedFamilies returns every zkelect_ metric family the daemon, the
// demo store and a routing client register (whether or not it has a
// series yet): the daemon's own, a session's, a partition manager's,
// zxidfence's and partition/routing's.
func exportedFamilies(t *testing.T) map[string]bool {
	t.Helper()
	rec := &recordingRegisterer{Registerer: prometheus.NewRegistry()}
	newDaemonMetrics(rec, "m1")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sess, err := recipe.Connect(ctx, zkc.Addrs(), recipe.WithMetrics(rec))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := partition.NewManager(sess, testPath(t), partition.Config{MemberID: "m1", Shards: partition.Range(0, 2), Metrics: rec}); err != nil {
		t.Fatal(err)
	}
	if _, err := zxidfence.NewMetrics(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := routing.New(routing.Config{Source: routing.ZooKeeper(sess, testPath(t)), Shards: partition.Range(0, 2), Metrics: rec}); err != nil {
		t.Fatal(err)
	}
	return rec.names()
}

// scrapedTypes returns the zkelect_ families of a /metrics page with their
// types (its # TYPE lines).
func scrapedTypes(body string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (zkelect_[a-z0-9_]+) (\w+)$`).FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestMetricsListMatchesExported checks deploy/README.md's list of metrics
// against what is exported: every family the daemon and the demo store
// register is listed and nothing else; every family a running daemon and
// store serve on /metrics is listed with its type; the counters whose
// reasons the alerts and panels read serve every reason at 0 from the
// start; and zkelect_session_answer_lag_seconds is said, wherever the
// docs name it, to include idle time.
func TestMetricsListMatchesExported(t *testing.T) {
	doc := readMetricsDoc(t)
	exported := exportedFamilies(t)
	for name := range exported {
		if _, ok := doc[name]; !ok && strings.HasPrefix(name, "zkelect_") {
			t.Errorf("%s is exported but not in %s's metrics table", name, metricsDocFile)
		}
	}
	for name := range doc {
		if !exported[name] {
			t.Errorf("%s's metrics table lists %s, which nothing exports", metricsDocFile, name)
		}
	}

	d := startDaemonWith(t, testPath(t), "m1", 2, nil)
	store := &daemon{url: "http://" + startDemoStore(t)}
	var body string
	eventually(t, 30*time.Second, "the daemon's /metrics to show its shard elections", func() bool {
		_, body = d.get(t, "/metrics")
		return strings.Contains(body, "zkelect_leadership_acquired_total{")
	})
	_, storeBody := store.get(t, "/metrics")
	for _, page := range []string{body, storeBody} {
		for name, kind := range scrapedTypes(page) {
			if dm, ok := doc[name]; !ok || dm.kind != kind {
				t.Errorf("/metrics serves %s, a %s; %s lists it as %q", name, kind, metricsDocFile, dm.kind)
			}
		}
	}
	for _, series := range []string{
		`zkelect_partition_leaderships_stopped_total{member="m1",reason="handoff"`,
		`zkelect_partition_leaderships_stopped_total{member="m1",reason="lost"`,
		`zkelect_partition_leaderships_stopped_total{member="m1",reason="stopping"`,
		`zkelect_leadership_lost_total{election="`, // the shards' election label
		`reason="session_expired"} 0`,
		`reason="suspended"} 0`,
		`reason="znode_deleted"} 0`,
	} {
		if !strings.Contains(body, series) {
			t.Errorf("the daemon's /metrics lacks %s at the start:\n%s", series, grepLines(body, "_total{"))
		}
	}
	checkAnswerLagDocs(t)
}

// checkAnswerLagDocs: each paragraph of the docs that names
// zkelect_session_answer_lag_seconds says that it includes idle time (it
// is how long ago the last answered request was sent: up to a third of
// the session timeout on an idle session, not a latency).
func checkAnswerLagDocs(t *testing.T) {
	t.Helper()
	for _, f := range []string{"../../../../README.md", "../../README.md", metricsDocFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, para := range strings.Split(string(b), "\n\n") {
			if strings.Contains(para, "zkelect_session_answer_lag_seconds") && !strings.Contains(para, "idle") {
				t.Errorf("%s names zkelect_session_answer_lag_seconds without saying it includes idle time:\n%s", f, para)
			}
		}
	}
}

// grepLines returns the lines of s containing substr.
func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
