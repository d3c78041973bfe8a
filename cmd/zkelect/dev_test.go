package main

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
	dev := testenv.StartProcess(t, zkelectBin, []string{"dev", "--servers", "3", "--tick-time", "100ms"}, nil)
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

	conn, _, err := zk.Connect(servers, 2*time.Second, zk.WithLogger(quietZK{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Create("/dev-test", []byte("hello"), 0, zk.WorldACL(zk.PermAll))
	conn.Close()
	if err != nil {
		t.Fatalf("create through the dev ensemble: %v", err)
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
