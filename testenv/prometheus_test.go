package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// TestPrometheusScrapesTargetsAndEvaluatesRules starts a Prometheus that
// scrapes one plain HTTP target and loads a recording and an alerting
// rule, and reads all of it back through the query, targets and rules API.
func TestPrometheusScrapesTargetsAndEvaluatesRules(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "# TYPE demo_answer gauge\ndemo_answer 42")
	}))
	defer target.Close()
	rules := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(rules, []byte(`groups:
  - name: demo
    rules:
      - record: demo_answer_doubled
        expr: 2 * demo_answer
      - alert: DemoAnswerKnown
        expr: demo_answer == 42
`), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := testenv.StartPrometheus(t, testenv.PrometheusOptions{
		Jobs:      map[string][]string{"demo": {strings.TrimPrefix(target.URL, "http://")}},
		RuleFiles: []string{rules},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for expr, want := range map[string]float64{`demo_answer{job="demo"}`: 42, `demo_answer_doubled`: 84} {
		awaitSample(ctx, t, prom, expr, want)
	}
	targets, err := prom.Targets(ctx)
	if err != nil || len(targets) != 1 || targets[0].Job != "demo" || targets[0].Health != "up" {
		t.Errorf("Targets = %+v, %v; want the demo job up", targets, err)
	}
	got, err := prom.Rules(ctx)
	if err != nil || len(got) != 2 || got[0].Health != "ok" || got[1].Name != "DemoAnswerKnown" || got[1].State != "firing" {
		t.Errorf("Rules = %+v, %v; want the recording rule ok and DemoAnswerKnown firing", got, err)
	}
	if _, err := prom.Query(ctx, "sum(", time.Time{}); !errors.Is(err, testenv.ErrPrometheusAPI) {
		t.Errorf("Query of a malformed expression: %v; want ErrPrometheusAPI", err)
	}
}

// awaitSample polls expr until it returns one sample of value want.
func awaitSample(ctx context.Context, t *testing.T, prom *testenv.Prometheus, expr string, want float64) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := prom.Query(ctx, expr, time.Time{})
		if err == nil && len(got) == 1 && got[0].Value == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s = %v, %v; want one sample %v", expr, got, err, want)
		case <-tick.C:
		}
	}
}

func TestPrometheusRefusesNegativeScrapeInterval(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := testenv.StartPrometheusServer(ctx, testenv.PrometheusOptions{ScrapeInterval: -time.Second})
	if !errors.Is(err, testenv.ErrBadOptions) {
		if p != nil {
			_ = p.Close()
		}
		t.Fatalf("StartPrometheusServer with ScrapeInterval -1s: %v; want ErrBadOptions", err)
	}
}
