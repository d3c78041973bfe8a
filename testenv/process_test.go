package testenv_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

func startHelper(t *testing.T) *testenv.Process {
	t.Helper()
	p := testenv.StartProcess(t, os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=1"})
	want := fmt.Sprintf("ready pid=%d", p.PID())
	if _, err := p.WaitLine(testContext(t), func(l string) bool { return l == want }); err != nil {
		t.Fatal(err)
	}
	return p
}

// procState returns the state letter of pid from /proc (R, S, T, ...).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read state of %d: %v", pid, err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return fields[0]
}

func TestProcessPauseResumeKill(t *testing.T) {
	p := startHelper(t)
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if st := procState(t, p.PID()); st != "T" {
		t.Fatalf("paused process state %q, want T (stopped)", st)
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if st := procState(t, p.PID()); st == "T" {
		t.Fatalf("resumed process still stopped")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := p.Wait(testContext(t)); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Wait after Kill = %v, want killed by SIGKILL", err)
	}
	assertDead(t, p.PID())
	if _, err := p.WaitLine(testContext(t), func(l string) bool { return l == "never printed" }); !errors.Is(err, testenv.ErrProcessExited) {
		t.Fatalf("WaitLine after exit = %v, want ErrProcessExited", err)
	}
}

func TestProcessSignalAndOutput(t *testing.T) {
	p := startHelper(t)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitLine(testContext(t), func(l string) bool { return l == "terminated" }); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := p.Wait(testContext(t)); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("Wait = %v, want exit status 3", err)
	}
	if out := p.Output(); !strings.Contains(out, "to stderr") {
		t.Fatalf("Output() = %q, want stderr captured too", out)
	}
}

// TestServersDieWithTheirTestProcess kills (SIGKILL) a process that started
// a server without closing it, and expects the kernel to kill the server.
func TestServersDieWithTheirTestProcess(t *testing.T) {
	ctx := testContext(t)
	p := testenv.StartProcess(t, os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=cluster"})
	line, err := p.WaitLine(ctx, func(l string) bool { return strings.HasPrefix(l, "server pid=") })
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	if _, err := fmt.Sscanf(line, "server pid=%d dir=%s", &pid, &dir); err != nil {
		t.Fatalf("parse %q: %v", line, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !gone(pid) {
		select {
		case <-ctx.Done():
			t.Fatalf("server pid %d outlived the killed process that started it", pid)
		case <-tick.C:
		}
	}
}

// gone reports whether pid has exited (a zombie counts).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	return strings.HasPrefix(strings.TrimSpace(s[strings.LastIndexByte(s, ')')+1:]), "Z")
}
