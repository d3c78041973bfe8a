package proctree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestKillEndsASetsidChild: the descendants of a shell include its child
// that called setsid, in another session and process group, and Kill
// ends them all.
func TestKillEndsASetsidChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	sh := exec.Command("/bin/sh", "-c", `setsid sh -c 'echo $$ > "$0"; exec sleep 1000' "$1" & wait`, "sh", pidFile)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sh.Process.Kill(); _ = sh.Wait() })
	var setsidChild int
	deadline := time.Now().Add(30 * time.Second)
	for setsidChild == 0 {
		b, _ := os.ReadFile(pidFile)
		setsidChild, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if time.Now().After(deadline) {
			t.Fatal("the setsid child did not write its pid within 30s")
		}
		time.Sleep(5 * time.Millisecond) // polling a file another process writes
	}
	t.Cleanup(func() { _ = syscall.Kill(setsidChild, syscall.SIGKILL) })
	found := false
	for _, p := range Descendants(sh.Process.Pid) {
		if p.PID == setsidChild {
			found = true
			if p.PGID == sh.Process.Pid || p.PGID == syscall.Getpgrp() {
				t.Errorf("the setsid child is in process group %d; want a group of its own", p.PGID)
			}
		}
	}
	if !found {
		t.Fatalf("Descendants(%d) = %v; want the setsid child %d", sh.Process.Pid, Descendants(sh.Process.Pid), setsidChild)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Kill(ctx, sh.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if left := Descendants(sh.Process.Pid); len(left) != 0 {
		t.Fatalf("descendants still running after Kill: %v", left)
	}
	if err := sh.Wait(); err != nil { // its child killed, the shell's wait returns
		t.Logf("shell: %v", err)
	}
}
