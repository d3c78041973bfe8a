package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// privateHostsEnv tells a test binary re-executed by WithPrivateHosts that
// it runs in its own mount namespace: its value is the private hosts file,
// then the parent's mount namespace, after a tab.
const privateHostsEnv = "ZKELECT_TESTENV_PRIVATE_HOSTS"

// WithPrivateHosts runs body with a private /etc/hosts that it may change
// through h, for tests of name resolution (a server's address changing
// behind its name, a name that does not resolve yet). The test binary runs
// the test again, alone, under `unshare -m` (a mount namespace of its own,
// mounts private), where the child bind-mounts a fresh file over
// /etc/hosts; the parent reports the child's output and outcome. It needs
// root and util-linux's unshare: without them, or when the kernel refuses
// a namespace, the test is skipped with the reason. The machine's
// /etc/hosts is never written. t must be a top-level test or one of its
// subtests (the child selects it by name with -test.run).
func WithPrivateHosts(t *testing.T, body func(t *testing.T, h *Hosts)) {
	t.Helper()
	if v, ok := os.LookupEnv(privateHostsEnv); ok {
		h, err := mountPrivateHosts(v)
		if err != nil {
			t.Fatal(err)
		}
		body(t, h)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("testenv: a private /etc/hosts needs root (unshare -m and a bind mount); skipped")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("testenv: a private /etc/hosts needs util-linux's unshare, not found; skipped")
	}
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Skipf("testenv: cannot read this process's mount namespace (%v); skipped", err)
	}
	file := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(file, []byte(hostsBase), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-m", "--propagation", "private", os.Args[0], "-test.run", runPattern(t.Name()),
		"-test.count", "1", "-test.v"}
	cmd := exec.CommandContext(t.Context(), unshare, args...)
	cmd.Env = append(os.Environ(), privateHostsEnv+"="+file+"\t"+ns)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("testenv: %s in a private mount namespace:\n%s", t.Name(), out.String())
	var exit *exec.ExitError
	switch {
	case err == nil && strings.Contains(out.String(), "--- SKIP: "+t.Name()):
		t.Skip("testenv: skipped in the private mount namespace (see its output)")
	case err == nil:
	case errors.As(err, &exit) && strings.Contains(out.String(), "unshare failed"):
		t.Skipf("testenv: the kernel refused a mount namespace (%v); skipped", err)
	default:
		t.Fatalf("testenv: %s failed in its private mount namespace: %v", t.Name(), err)
	}
}

// runPattern is the -test.run pattern that selects exactly the test name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// mountPrivateHosts bind-mounts the file named in v over /etc/hosts, after
// checking that this process is not in the mount namespace named in v (the
// parent's): a bind mount there would change the machine's /etc/hosts.
func mountPrivateHosts(v string) (*Hosts, error) {
	file, parentNS, ok := strings.Cut(v, "\t")
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if !ok || err != nil || ns == parentNS {
		return nil, fmt.Errorf("testenv: %s set but this process is not in a mount namespace of its own (%s, %v); refusing to mount over /etc/hosts", privateHostsEnv, ns, err)
	}
	if err := syscall.Mount(file, "/etc/hosts", "", syscall.MS_BIND, ""); err != nil {
		return nil, fmt.Errorf("testenv: bind-mount the private hosts file over /etc/hosts: %w", err)
	}
	return &Hosts{path: file, names: map[string][]string{}}, nil
}
