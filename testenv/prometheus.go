package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrPrometheusNotFound is returned by StartPrometheusServer and Promtool
// when the prometheus or promtool binary is not found. The message says how
// to install them.
var ErrPrometheusNotFound = errors.New("testenv: prometheus or promtool not found in $PROMETHEUS_HOME or on PATH; " +
	"on Debian/Ubuntu apt-get install prometheus (or run `make deps`)")

// Defaults and bounds of a test Prometheus.
const (
	// DefaultScrapeInterval is PrometheusOptions.ScrapeInterval's default,
	// also the rule evaluation interval.
	DefaultScrapeInterval  = time.Second
	prometheusStartTimeout = 60 * time.Second
)

// PrometheusOptions configure a test Prometheus.
type PrometheusOptions struct {
	// Jobs maps a scrape job's name to its static targets (host:port,
	// scraped at /metrics over HTTP).
	Jobs map[string][]string
	// RuleFiles are paths of rule files (recording and alerting rules) to
	// load; relative paths are made absolute.
	RuleFiles []string
	// ScrapeInterval is how often targets are scraped and rules evaluated;
	// 0 means DefaultScrapeInterval.
	ScrapeInterval time.Duration
}

// Prometheus is a throwaway Prometheus server: configuration and storage in
// a temporary directory, the web API on a free 127.0.0.1 port. It is the
// test's child process (in its own process group).
type Prometheus struct {
	cmd    *exec.Cmd
	dir    string
	url    string
	exited chan struct{} // closed once the process has exited
	log    *lineBuffer

	closeOnce sync.Once
	closeErr  error
}

// StartPrometheus starts a Prometheus for t with opts and stops it and
// removes its files at t.Cleanup. It calls t.Fatal when Prometheus is
// missing (naming the package to install) or fails to start (with its log).
func StartPrometheus(t testing.TB, opts PrometheusOptions) *Prometheus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), prometheusStartTimeout)
	defer cancel()
	p, err := StartPrometheusServer(ctx, opts)
	if err != nil {
		t.Fatalf("start Prometheus: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("testenv: Prometheus log:\n%s", tail(p.log.String(), processLogLines))
		}
		if err := p.Close(); err != nil {
			t.Errorf("stop Prometheus: %v", err)
		}
	})
	return p
}

// StartPrometheusServer writes a configuration for opts into a new
// temporary directory, starts prometheus on it and returns once its
// /-/ready answers; the caller must Close it. It returns
// ErrPrometheusNotFound when the binary is missing, ctx's error (with the
// log) when ctx ends first, and an error with the log when it exits.
func StartPrometheusServer(ctx context.Context, opts PrometheusOptions) (*Prometheus, error) {
	bin, err := prometheusBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "zkelect-prometheus-")
	if err != nil {
		return nil, fmt.Errorf("testenv: prometheus temp dir: %w", err)
	}
	p, err := startPrometheusIn(ctx, bin, dir, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

// URL returns the server's base URL, e.g. "http://127.0.0.1:40123".
func (p *Prometheus) URL() string { return p.url }

// Close stops the server (SIGTERM; SIGKILL to its process group if it has
// not exited within 10s) and removes its directory. It is idempotent.
func (p *Prometheus) Close() error {
	p.closeOnce.Do(func() {
		p.closeErr = stopChildServer("prometheus", p.cmd.Process, p.exited, syscall.SIGTERM, p.dir)
	})
	return p.closeErr
}

// Promtool returns the path of Prometheus's promtool (for `promtool check
// rules` and `promtool test rules`), found as the server is, or
// ErrPrometheusNotFound.
func Promtool() (string, error) { return prometheusTool("promtool") }

func prometheusBinary() (string, error) { return prometheusTool("prometheus") }

// prometheusTool prefers $PROMETHEUS_HOME/<name> (an unpacked release),
// then name on PATH (Debian's prometheus package installs /usr/bin/prometheus
// and /usr/bin/promtool).
func prometheusTool(name string) (string, error) {
	if home := os.Getenv("PROMETHEUS_HOME"); home != "" {
		if p := filepath.Join(home, name); isFile(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", ErrPrometheusNotFound
	}
	return p, nil
}

func startPrometheusIn(ctx context.Context, bin, dir string, opts PrometheusOptions) (*Prometheus, error) {
	config, err := writePrometheusConfig(dir, opts)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := exec.Command(bin,
		"--config.file="+config,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	cmd.SysProcAttr = childProcAttr()
	log := newLineBuffer()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testenv: start prometheus: %w", err)
	}
	p := &Prometheus{cmd: cmd, dir: dir, url: "http://" + addr, exited: make(chan struct{}), log: log}
	go func() {
		_ = cmd.Wait()
		log.finish()
		close(p.exited)
	}()
	if err := p.awaitReady(ctx); err != nil {
		_ = stopChildServer("prometheus", cmd.Process, p.exited, syscall.SIGTERM, "")
		return nil, err
	}
	return p, nil
}

// writePrometheusConfig writes prometheus.yml (as JSON, which is YAML) into
// dir and returns its path.
func writePrometheusConfig(dir string, opts PrometheusOptions) (string, error) {
	interval := opts.ScrapeInterval
	if interval == 0 {
		interval = DefaultScrapeInterval
	}
	if interval < 0 {
		return "", &OptionsError{Field: "PrometheusOptions.ScrapeInterval", Value: interval, Reason: "want a positive interval such as 1s, or 0 for the default"}
	}
	type staticConfig struct {
		Targets []string `json:"targets"`
	}
	type scrapeConfig struct {
		JobName       string         `json:"job_name"`
		StaticConfigs []staticConfig `json:"static_configs"`
	}
	cfg := struct {
		Global map[string]string `json:"global"`
		Rules  []string          `json:"rule_files,omitempty"`
		Scrape []scrapeConfig    `json:"scrape_configs"`
	}{Global: map[string]string{"scrape_interval": interval.String(), "evaluation_interval": interval.String()}}
	for _, f := range opts.RuleFiles {
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", fmt.Errorf("testenv: rule file %s: %w", f, err)
		}
		cfg.Rules = append(cfg.Rules, abs)
	}
	for job, targets := range opts.Jobs {
		cfg.Scrape = append(cfg.Scrape, scrapeConfig{JobName: job, StaticConfigs: []staticConfig{{Targets: targets}}})
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("testenv: write prometheus config: %w", err)
	}
	return path, nil
}

// awaitReady polls /-/ready, backing off from 20 ms to 500 ms, until it
// answers 200, the process exits or ctx ends.
func (p *Prometheus) awaitReady(ctx context.Context) error {
	wait := 20 * time.Millisecond
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/-/ready", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-p.exited:
			timer.Stop()
			return fmt.Errorf("testenv: prometheus exited during start-up; log:\n%s", p.log)
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("testenv: prometheus not ready: %w; log:\n%s", ctx.Err(), p.log)
		case <-timer.C:
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}
