package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/testenv"
)

// TestDevServesUntilSIGTERM runs `zkelect dev`, uses its ensemble with a Go
// client, stops it with SIGTERM and checks that none of its servers is left.
func TestDevServesUntilSIGTERM(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dev := testenv.StartProcess(t, zkelectDevBin, []string{"dev", "--servers", "3", "--tick-time", "100ms", "--heap", "64m"}, nil)
	line, err := dev.WaitLine(ctx, func(l string) bool { return strings.HasPrefix(l, "ZKELECT_ZK=") })
	if err != nil {
		t.Fatal(err)
	}
	servers := strings.Split(strings.TrimPrefix(line, "ZKELECT_ZK="), ",")
	if len(servers) != 3 {
		t.Fatalf("connect string %q: want 3 servers", line)
	}
	dir := devDataDir(t, dev.Output())
	pids := devServerPIDs(t, dev.Output())
	for _, pid := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && !strings.Contains(string(b), "-Xmx64m\x00") {
			t.Errorf("server pid %d runs without --heap's -Xmx64m: %q", pid, b)
		}
	}

	conn, _, err := zk.Connect(servers, 2*time.Second, zk.WithLogger(quietZK{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Create("/dev-test", []byte("hello"), 0, zk.WorldACL(zk.PermAll))
	conn.Close()
	if err != nil {
		t.Fatalf("create through the dev ensemble: %v", err)
	}

	// The other commands' default session timeout is what dev grants.
	daemon := startProc(t, "shards on dev", []string{"shards", "--zk", strings.Join(servers, ","), "--root", "/dev-test-shards",
		"--member", "m1", "--shards", "2", "--listen", "127.0.0.1:0", "--exec", "sleep 100"})
	daemon.waitStderr(ctx, "shards daemon started")
	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(20 * time.Second); code != 0 {
		t.Errorf("shards daemon on dev exited %d", code)
	}
	for _, warning := range []string{"granted another session timeout", "--grace is above"} {
		if strings.Contains(daemon.err.String(), warning) {
			t.Errorf("a daemon with default flags on zkelect dev warns %q:\n%s", warning, daemon.err.String())
		}
	}

	if err := dev.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := dev.Wait(ctx); err != nil {
		t.Fatalf("zkelect dev after SIGTERM: %v, want exit status 0", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("ZooKeeper server pid %d still exists after zkelect dev exited (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir %s still exists after zkelect dev exited (%v)", dir, err)
	}
	if left := processesMentioning(t, dir); len(left) > 0 {
		t.Errorf("processes still running from %s: %v", dir, left)
	}
}

type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

// devDataDir reads the data directory from dev's first line.
func devDataDir(t *testing.T, out string) string {
	t.Helper()
	_, dir, ok := strings.Cut(out, "data in ")
	dir, _, _ = strings.Cut(dir, "\n")
	if !ok || dir == "" {
		t.Fatalf("no data dir in output %q", out)
	}
	return dir
}

// devServerPIDs reads the "(pid N)" of each server line.
func devServerPIDs(t *testing.T, out string) []int {
	t.Helper()
	var pids []int
	for line := range strings.Lines(out) {
		_, rest, ok := strings.Cut(line, "(pid ")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), ")"))
		if err != nil {
			t.Fatalf("parse pid in %q: %v", line, err)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 3 {
		t.Fatalf("found %d server pids in output %q, want 3", len(pids), out)
	}
	return pids
}

// processesMentioning lists the pids whose command line contains s.
func processesMentioning(t *testing.T, s string) []int {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		pids = append(pids, pid)
	}
	return pids
}

// TestDevRefusesBadFlags: each of these once started an ensemble anyway
// (--servers 0 ran 1, 2 and 7 ran, --tick-time 0 ran 100ms), dumped
// ZooKeeper's crash log (--max-session-timeout below 2 ticks). Each error
// names the flag at fault, mapped from the field testenv's OptionsError
// names.
func TestDevRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--servers", "0"}, "invalid --servers 0: use 1 (standalone), 3 or 5"},
		{[]string{"--servers", "2"}, "invalid --servers 2"},
		{[]string{"--servers", "7"}, "invalid --servers 7"},
		{[]string{"--tick-time", "0"}, "invalid --tick-time 0s: want whole milliseconds, at least 10ms (default 200ms)"},
		{[]string{"--tick-time", "1500us"}, "invalid --tick-time 1.5ms"},
		{[]string{"--tick-time", "5ms"}, "invalid --tick-time 5ms: want whole milliseconds, at least 10ms"},
		{[]string{"--max-session-timeout", "1ms"}, "invalid --max-session-timeout 1ms: ZooKeeper wants at least its minimum session timeout, 400ms (dev's minimum is 2 x --tick-time)"},
		{[]string{"--tick-time", "1s", "--max-session-timeout", "1999ms"}, "minimum session timeout, 2s"},
		{[]string{"--max-session-timeout", "2500us"}, "invalid --max-session-timeout 2.5ms: want whole milliseconds"},
		{[]string{"--max-session-timeout", "-1s"}, "invalid --max-session-timeout -1s: want whole milliseconds"},
		{[]string{"--heap", "lots"}, `invalid --heap "lots": want a size such as 512m or 2g`},
		{[]string{"--heap", "16m"}, `invalid --heap "16m": want at least 32m`},
		{[]string{"--heap", "0"}, `invalid --heap "0"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			p := startProc(t, "dev", append([]string{"dev"}, tc.args...))
			code := p.wait(10 * time.Second)
			stderr := p.err.String()
			if lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n"); code != 1 || len(lines) != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and one line containing %q", code, stderr, tc.want)
			}
			if out := p.out.String(); out != "" {
				t.Errorf("dev started something: %q", out)
			}
		})
	}
}

func TestDevHelpStatesTheRealDefaults(t *testing.T) {
	p := startProc(t, "dev --help", []string{"dev", "--help"})
	if code := p.wait(10 * time.Second); code != 0 {
		t.Fatalf("dev --help: exit %d", code)
	}
	help := p.out.String()
	for _, want := range []string{"(default 200ms)", `--heap string`, `(default "512m")`, "at least 2 ticks (default the longer of 20 ticks and 10s"} {
		if !strings.Contains(help, want) {
			t.Errorf("dev --help lacks %q:\n%s", want, help)
		}
	}
}
