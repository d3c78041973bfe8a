package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// TestSASLRequiredEnsembleHintsAtZKAuth: against an ensemble that
// requires SASL (sessionRequireClientSASLAuth), status and an operator
// verb without --zk-auth fail in one line that names the fix, not only
// ZooKeeper's SESSIONCLOSEDREQUIRESASLAUTH (-124).
func TestSASLRequiredEnsembleHintsAtZKAuth(t *testing.T) {
	zks := testenv.New(t, testenv.Options{SASLUsers: map[string]string{"cmdgroup": "cmd-secret"}, SASLRequired: true})
	for name, args := range map[string][]string{
		"status": {"status", "--zk", zks.ConnectString(), "--election", "/apps/job"},
		"freeze": {"shards", "freeze", "--zk", zks.ConnectString(), "--root", "/apps/billing"},
	} {
		t.Run(name, func(t *testing.T) {
			p := startProc(t, name, args)
			code := p.wait(60 * time.Second)
			stderr := strings.TrimSpace(p.err.String())
			if code == 0 || strings.Count(stderr, "\n") != 0 || !strings.Contains(stderr, "--zk-auth sasl") {
				t.Fatalf("%s without --zk-auth against a SASL-only ensemble: exit %d, stderr %q; want one line naming --zk-auth sasl", name, code, stderr)
			}
			t.Logf("%s", stderr)
		})
	}
}

// TestDigestCredentialsStayOutOfChildren: run --zk-auth digest with the
// credentials in $ZKELECT_ZK_CREDENTIALS over plain TCP warns once that
// they go in clear, and its watchdog (a child started before the leader's)
// does not inherit the variable: run removed it from its own environment
// once read.
func TestDigestCredentialsStayOutOfChildren(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	p := startProc(t, "p1", runArgs(t, zkc.ConnectString(), testPath(t)+"/run", "p1", "--zk-auth", "digest"),
		envTestChild+"="+events, envZKCredentials+"=cmdgroup:cmdsecret")
	eventually(t, 20*time.Second, "p1's child to start", func() bool { return countKind(readEvents(t, events), "start") == 1 })
	if n := strings.Count(p.err.String(), "--zk-auth digest over plain TCP"); n != 1 {
		t.Errorf("run warned %d times that digest credentials go in clear; want once:\n%s", n, p.err.String())
	}
	checkNoCredentials(t, watchdogOf(t, p.cmd.Process.Pid))
}

// TestUnusedCredentialsStayOutOfChildren: run without --zk-auth, with
// $ZKELECT_ZK_CREDENTIALS set all the same (a unit that forgot the flag),
// does not pass the secret on to its watchdog or its child.
func TestUnusedCredentialsStayOutOfChildren(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	p := startProc(t, "p1", runArgs(t, zkc.ConnectString(), testPath(t)+"/run", "p1"),
		envTestChild+"="+events, envZKCredentials+"=cmdgroup:cmdsecret")
	eventually(t, 20*time.Second, "p1's child to start", func() bool { return countKind(readEvents(t, events), "start") == 1 })
	checkNoCredentials(t, watchdogOf(t, p.cmd.Process.Pid))
}

// checkNoCredentials fails t if process pid's environment holds
// $ZKELECT_ZK_CREDENTIALS.
func checkNoCredentials(t *testing.T, pid int) {
	t.Helper()
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(env, []byte(envZKCredentials+"=")) {
		t.Fatalf("the watchdog (pid %d) inherited %s", pid, envZKCredentials)
	}
}

// watchdogOf returns the pid of the watchdog process of parent, found by
// its command line (watchdog.Arg and the parent's pid).
func watchdogOf(t *testing.T, parent int) int {
	t.Helper()
	want := []byte("__zkelect-watchdog\x00" + strconv.Itoa(parent) + "\x00")
	var found int
	eventually(t, 20*time.Second, "the watchdog process of run", func() bool {
		dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, d := range dirs {
			if b, err := os.ReadFile(d); err == nil && bytes.HasSuffix(b, want) {
				found, _ = strconv.Atoi(filepath.Base(filepath.Dir(d)))
				return true
			}
		}
		return false
	})
	return found
}
