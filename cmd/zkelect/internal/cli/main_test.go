package cli

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/zkelectd"
	"github.com/zkelect/zkelect/testenv"
)

// Package zkelectd's pieces under the names the tests use.
const envShard = zkelectd.EnvShard

var shellQuote = zkelectd.ShellQuote

// newDaemonMetrics registers the daemon's collectors on reg, as `zkelect
// shards` does.
func newDaemonMetrics(reg prometheus.Registerer, member string) *zkelectd.Metrics {
	return zkelectd.NewMetrics(reg, member, buildVersion())
}

// zkc is the standalone ZooKeeper server shared by this package's tests.
var zkc *testenv.Cluster

// zkelectBin and zkelectDevBin are the zkelect and zkelect-dev binaries
// built once by TestMain.
var zkelectBin, zkelectDevBin string

// envTestChild makes the test binary act as a child of `zkelect run`: it
// appends "start" and "stop" events to the file the variable names.
const envTestChild = "ZKELECT_TEST_CHILD_EVENTS"

func TestMain(m *testing.M) {
	if code, ok := runReaper(os.Args); ok { // a child started by a test in this process (see childCommand)
		os.Exit(code)
	}
	if path := os.Getenv(envTestChild); path != "" {
		os.Exit(testChild(path))
	}
	dir, err := os.MkdirTemp("", "zkelect-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := buildAndRun(m, dir)
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildAndRun builds the real binary into dir and runs the tests against a
// standalone server with a 100 ms tick and session timeouts up to 6 s.
func buildAndRun(m *testing.M, dir string) int {
	zkelectBin, zkelectDevBin = filepath.Join(dir, "zkelect"), filepath.Join(dir, "zkelect-dev")
	for bin, pkg := range map[string]string{zkelectBin: "../..", zkelectDevBin: "../../zkelect-dev"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", pkg+":", err)
			return 1
		}
	}
	return testenv.Main(m, testenv.Options{Servers: 1, MaxSessionTimeout: 6 * time.Second}, &zkc)
}

// testChild is the child `zkelect run` starts in these tests. It records
// its start (with what it found in its environment), waits for SIGTERM,
// records the stop and exits with $ZKELECT_TEST_CHILD_EXIT (default 0). With
// $ZKELECT_TEST_CHILD_QUIT it exits at once with that status; with
// $ZKELECT_TEST_CHILD_IGNORE_TERM it ignores SIGTERM.
func testChild(path string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	code := 0
	fmt.Sscan(os.Getenv("ZKELECT_TEST_CHILD_EXIT"), &code)
	appendEvent(path, "start", os.Getenv(envParticipantID), os.Getenv(envFencingToken),
		os.Getenv(envElection), os.Getenv(envZnode), fmt.Sprint(os.Getpid()), os.Getenv(envShard), os.Getenv(envZKCredentials))
	if os.Getenv("ZKELECT_TEST_CHILD_QUIT") != "" {
		return code
	}
	if os.Getenv("ZKELECT_TEST_CHILD_IGNORE_TERM") != "" {
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour) // until SIGKILL
	}
	s := <-sigs
	appendEvent(path, "stop", os.Getenv(envParticipantID), s.String(), fmt.Sprint(os.Getpid()), os.Getenv(envShard))
	return code
}

// appendEvent appends one line to path; O_APPEND keeps lines from
// different processes whole and in the order they were written.
func appendEvent(path string, fields ...string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	for i, v := range fields {
		if v == "" {
			fields[i] = "-" // keep positions for readEvents
		}
	}
	f.WriteString(strings.Join(fields, " ") + "\n")
}

// childEvent is one line of a test child's event file.
type childEvent struct {
	kind   string // start or stop
	fields []string
}

func (e childEvent) id() string { return e.fields[0] }

// readEvents reads a test child's event file.
func readEvents(t *testing.T, path string) []childEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("read child events: %v", err)
	}
	var out []childEvent
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			out = append(out, childEvent{kind: f[0], fields: f[1:]})
		}
	}
	return out
}

func countKind(evs []childEvent, kind string) int {
	n := 0
	for _, e := range evs {
		if e.kind == kind {
			n++
		}
	}
	return n
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestZkelectLinksNoTestCode: the zkelect binary (the daemon users deploy)
// links neither the testing package, goleak, testenv nor bench; demo, dev
// and bench live in zkelect-dev. It once linked all four through them.
func TestZkelectLinksNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zkelect/zkelect/cmd/zkelect").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, bad := range []string{"testing", "go.uber.org/goleak", "github.com/zkelect/zkelect/testenv", "github.com/zkelect/zkelect/bench"} {
		if slices.Contains(deps, bad) {
			t.Errorf("the zkelect binary links %s", bad)
		}
	}
	t.Logf("zkelect links %d packages", len(deps))
}
