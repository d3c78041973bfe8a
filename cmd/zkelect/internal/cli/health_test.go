package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHealthzFailsWhenCutOffPastTheLease cuts a daemon off from ZooKeeper
// (its link blackholed): /healthz turns 503, naming the cause, once no
// answer came for a session timeout, and 200 again once it is healed.
func TestHealthzFailsWhenCutOffPastTheLease(t *testing.T) {
	proxy := zkc.NewProxyT(t)
	d := startDaemonWith(t, testPath(t), "m1", 1, []string{"--zk", proxy.ConnectString()})
	if code, body := d.get(t, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz of a connected daemon: %d %s", code, body)
	}
	proxy.Blackhole()
	eventually(t, procSessionTimeout+10*time.Second, "/healthz to fail while cut off", func() bool {
		code, body := d.get(t, "/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "ZooKeeper")
	})
	proxy.Heal()
	eventually(t, 3*procSessionTimeout+10*time.Second, "/healthz to pass again once healed", func() bool {
		code, _ := d.get(t, "/healthz")
		return code == http.StatusOK
	})
}

// TestReadyzNotReadyWhileDraining stops a daemon whose shard child takes a
// while to stop: from the SIGTERM on, /readyz answers 503 while /healthz
// stays ok.
func TestReadyzNotReadyWhileDraining(t *testing.T) {
	dir := t.TempDir()
	started, worker := filepath.Join(dir, "started"), filepath.Join(dir, "worker.sh")
	script := "#!/bin/sh\ntrap 'sleep 3; exit 0' TERM\ntouch " + shellQuote(started) + "\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(worker, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := startDaemonWith(t, testPath(t), "m1", 1, []string{"--exec", shellQuote(worker), "--grace", "5s"})
	eventually(t, 20*time.Second, "ready with its child started", func() bool {
		_, err := os.Stat(started)
		code, _ := d.get(t, "/readyz")
		return err == nil && code == http.StatusOK
	})
	d.signal(syscall.SIGTERM)
	eventually(t, 2*time.Second, "/readyz to answer 503 while draining", func() bool {
		code, _ := d.get(t, "/readyz")
		return code == http.StatusServiceUnavailable
	})
	if code, body := d.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while draining: %d %s", code, body)
	}
	if code := d.wait(20 * time.Second); code != 0 {
		t.Errorf("daemon exited %d", code)
	}
}
