package watchdog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/proctree"
	"github.com/zkelect/zkelect/internal/watchdog"
	"github.com/zkelect/zkelect/testenv"
)

// sessionTimeout is what the parent's session asks for: long, so that a
// deletion well before it can only be the watchdog's doing.
const sessionTimeout = 4 * time.Second

var zkc *testenv.Cluster

// Modes of the test binary re-executed as the watched parent or as its
// watchdog (envMode), and what they are told.
const (
	envMode    = "WATCHDOG_TEST_MODE"
	envServers = "WATCHDOG_TEST_SERVERS"
	envZnode   = "WATCHDOG_TEST_ZNODE"
	envReport  = "WATCHDOG_TEST_REPORT"
	envParent  = "WATCHDOG_TEST_PARENT"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envMode) {
	case "parent":
		os.Exit(runParent())
	case "watchdog":
		os.Exit(runWatchdog())
	}
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1, MaxSessionTimeout: 2 * sessionTimeout}, &zkc))
}

// runParent holds an ephemeral znode on its own session, starts its
// watchdog in a process group of its own and a worker (sleep) in another,
// hands the session and the worker's group over, prints "READY <watchdog
// pid> <worker pid>" and waits to be killed.
func runParent() int {
	conn, _, err := zk.Connect(strings.Split(os.Getenv(envServers), ","), sessionTimeout, zk.WithLogger(quiet{}))
	if err != nil {
		return fail(err)
	}
	if _, err := conn.Create(os.Getenv(envZnode), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		return fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	w := exec.Command(exe)
	w.Env = append(os.Environ(), envMode+"=watchdog", envParent+"="+strconv.Itoa(os.Getpid()))
	w.Stderr = os.Stderr
	w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := w.StdinPipe()
	if err != nil {
		return fail(err)
	}
	if err := w.Start(); err != nil {
		return fail(err)
	}
	pw, err := password(conn)
	if err != nil {
		return fail(err)
	}
	h := watchdog.NewHandoff(pipe)
	if err := h.Session(watchdog.Credentials{ID: conn.SessionID(), Password: pw, Servers: strings.Split(os.Getenv(envServers), ",")}); err != nil {
		return fail(err)
	}
	worker := exec.Command("sleep", "600")
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := worker.Start(); err != nil {
		return fail(err)
	}
	if err := h.Guard(worker.Process.Pid); err != nil {
		return fail(err)
	}
	fmt.Printf("READY %d %d\n", w.Process.Pid, worker.Process.Pid)
	select {} // until killed
}

// runWatchdog serves its parent and writes the outcome to the report file.
func runWatchdog() int {
	parent, err := strconv.Atoi(os.Getenv(envParent))
	if err != nil {
		return fail(err)
	}
	out, err := watchdog.Serve(context.Background(), watchdog.Config{
		Parent: parent, In: os.Stdin,
		Close: func(ctx context.Context, c watchdog.Credentials) error {
			return testenv.ExpireSession(ctx, c.Servers, c.ID, c.Password)
		},
	})
	if err != nil {
		return fail(err)
	}
	report := fmt.Sprintf("died=%v closed=%d errors=%v\n", out.ParentDied, len(out.Closed), errors.Join(out.Errors...))
	if err := os.WriteFile(os.Getenv(envReport), []byte(report), 0o644); err != nil {
		return fail(err)
	}
	return 0
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "watchdog test child:", err)
	return 1
}

// password reads a go-zookeeper v1.0.4 connection's session password,
// which it does not export (as testenv.ExpireConn does).
func password(conn *zk.Conn) ([]byte, error) {
	f := reflect.ValueOf(conn).Elem().FieldByName("passwd")
	if !f.IsValid() || f.Kind() != reflect.Slice {
		return nil, errors.New("zk.Conn has no passwd field")
	}
	return append([]byte(nil), f.Bytes()...), nil
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// watched starts a parent holding znode and returns it, its watchdog's and
// its worker's pids and the report file the watchdog writes when it is done.
func watched(t *testing.T, znode string) (p *testenv.Process, wpid, worker int, report string) {
	t.Helper()
	report = t.TempDir() + "/report"
	p = testenv.StartProcess(t, os.Args[0], nil, []string{
		envMode + "=parent", envServers + "=" + zkc.ConnectString(), envZnode + "=" + znode, envReport + "=" + report,
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l, err := p.WaitLine(ctx, func(l string) bool { return strings.HasPrefix(l, "READY ") })
	if err != nil {
		t.Fatalf("parent not ready: %v", err)
	}
	if _, err := fmt.Sscanf(l, "READY %d %d", &wpid, &worker); err != nil {
		t.Fatalf("parent said %q: %v", l, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(wpid, syscall.SIGKILL)
		_ = syscall.Kill(-worker, syscall.SIGKILL)
	})
	return p, wpid, worker, report
}

// observer connects the test's own session and watches znode.
func observer(t *testing.T, znode string) <-chan zk.Event {
	t.Helper()
	conn, _, err := zk.Connect(zkc.Addrs(), 2*sessionTimeout, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	ok, _, ch, err := conn.ExistsW(znode)
	if err != nil || !ok {
		t.Fatalf("%s exists = %v, %v; want the parent's znode", znode, ok, err)
	}
	return ch
}

// awaitReport waits for the watchdog's report.
func awaitReport(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return string(b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no watchdog report in %s after 30s", path)
	return ""
}

// TestKilledParentsSessionIsClosed: once its parent is SIGKILLed the
// watchdog kills the guarded worker and then closes the handed-over
// session, so the parent's ephemeral znode goes long before the session
// could have expired, and no worker outlives it.
func TestKilledParentsSessionIsClosed(t *testing.T) {
	znode := fmt.Sprintf("/watchdog-killed-%d", time.Now().UnixNano())
	p, _, worker, report := watched(t, znode)
	deleted := observer(t, znode)
	killed := time.Now()
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	limit := time.NewTimer(sessionTimeout / 2) // from the kill: Kill waits for the output, which the watchdog shares
	defer limit.Stop()
	select {
	case ev := <-deleted:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("watch fired with %v, want the deletion", ev.Type)
		}
	case <-limit.C:
		t.Fatalf("%s still there %s after its owner was killed: the watchdog did not close the session (it expires after %s)",
			znode, sessionTimeout/2, sessionTimeout)
	}
	t.Logf("znode deleted %s after the kill", time.Since(killed))
	if p, ok := proctree.Stat(worker); ok && p.Live {
		t.Fatalf("the guarded worker (pid %d) can still run when the session is gone, want dead (gone or a zombie)", worker)
	}
	if got := awaitReport(t, report); got != "died=true closed=1 errors=<nil>\n" {
		t.Fatalf("watchdog report %q, want the parent dead and its session closed", got)
	}
}

// TestPausedParentIsAlive: a parent SIGSTOPped past its session timeout
// is alive; its watchdog does nothing (the session expires on its own) and
// acts only once the parent is killed.
func TestPausedParentIsAlive(t *testing.T) {
	znode := fmt.Sprintf("/watchdog-paused-%d", time.Now().UnixNano())
	p, wpid, worker, report := watched(t, znode)
	deleted := observer(t, znode)
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	select {
	case <-deleted: // the session expired: the parent sent no pings
	case <-time.After(4 * sessionTimeout):
		t.Fatalf("%s still there %s after its owner was paused", znode, 4*sessionTimeout)
	}
	if d := time.Since(paused); d < sessionTimeout/2 {
		t.Fatalf("znode deleted %s after the pause, before the session could expire: the watchdog took a paused process for dead", d)
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(report); err == nil {
		t.Fatalf("watchdog reported while its parent lived: %s", awaitReport(t, report))
	}
	if err := syscall.Kill(wpid, 0); err != nil {
		t.Fatalf("watchdog gone while its parent lives: %v", err)
	}
	if err := syscall.Kill(worker, 0); err != nil {
		t.Fatalf("guarded worker killed while its parent lives: %v", err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	got := awaitReport(t, report)
	if !strings.HasPrefix(got, "died=true closed=0 errors=") || !strings.Contains(got, "no such session") {
		t.Fatalf("watchdog report %q, want the parent dead and its (expired) session gone already", got)
	}
}
