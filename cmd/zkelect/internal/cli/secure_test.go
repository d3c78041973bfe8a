package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// TestCommandsOverTLSWithSASL: run and status reach a server's secure
// client port with --zk-tls-ca and log in with --zk-auth sasl, the
// credentials from a file (and from the environment); wrong credentials and
// an untrusted server each end a command at once with one line naming the
// cause.
func TestCommandsOverTLSWithSASL(t *testing.T) {
	zks := testenv.New(t, testenv.Options{TLS: &testenv.TLSOptions{}, SASLUsers: map[string]string{"cmdgroup": "cmd-secret"}})
	files, _ := zks.TLSFiles()
	dir := t.TempDir()
	cred := filepath.Join(dir, "zk.cred")
	if err := os.WriteFile(cred, []byte("cmdgroup:cmd-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A minute to connect: a loaded machine's server is slow at its first
	// TLS handshakes.
	secure := []string{"--zk", zks.SecureAddrs()[0], "--zk-tls-ca", files.CAFile, "--zk-auth", "sasl", "--connect-timeout", "60s"}
	election, events := testPath(t)+"/run", filepath.Join(dir, "events") // its parent the test's own
	args := runArgs(t, zks.SecureAddrs()[0], election, "tls-1", "--zk-tls-ca", files.CAFile,
		"--zk-tls-cert", files.CertFile, "--zk-tls-key", files.KeyFile, "--zk-auth", "sasl", "--zk-auth-file", cred,
		"--connect-timeout", "60s")
	startProc(t, "run over TLS", args, envTestChild+"="+events)
	eventually(t, 90*time.Second, "the child of run over TLS to start", func() bool { return countKind(readEvents(t, events), "start") == 1 })

	st := startProc(t, "status over TLS", append([]string{"status", "--election", election}, secure...),
		envZKCredentials+"=cmdgroup:cmd-secret")
	if code := st.wait(90 * time.Second); code != 0 || !strings.Contains(st.out.String(), "tls-1") {
		t.Fatalf("status over TLS: exit %d, stdout %q; want tls-1 leading", code, st.out.String())
	}

	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"wrong password", secure, envZKCredentials + "=cmdgroup:guess", "refused the credentials of --zk-auth sasl"},
		{"untrusted server", []string{"--zk", zks.SecureAddrs()[0], "--zk-tls-ca", writeOtherCA(t, dir)}, "", "TLS to ZooKeeper at"},
		{"other server name", []string{"--zk", zks.SecureAddrs()[0], "--zk-tls-ca", files.CAFile, "--zk-tls-server-name", "zk.example.com"}, "", "TLS to ZooKeeper at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			p := startProc(t, tc.name, append([]string{"status", "--election", election, "--connect-timeout", "60s"}, tc.args...), tc.env)
			code := p.wait(90 * time.Second)
			stderr := strings.TrimSpace(p.err.String())
			if code != 1 || strings.Count(stderr, "\n") != 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and one line with %q", code, stderr, tc.want)
			}
			if d := time.Since(start); d > 45*time.Second {
				t.Errorf("took %v: the refusal waited for the connect timeout", d)
			}
		})
	}
}

// TestRefusedClientCertificateIsNamed: servers with ssl.clientAuth=need
// refuse status without a client certificate: one line naming the TLS
// alert and the flags to check, at once, not "cannot reach ZooKeeper".
func TestRefusedClientCertificateIsNamed(t *testing.T) {
	zks := testenv.New(t, testenv.Options{Servers: 1, TLS: &testenv.TLSOptions{ClientAuth: testenv.ClientAuthNeed}})
	files, _ := zks.TLSFiles()
	start := time.Now()
	p := startProc(t, "status without a client certificate", []string{"status", "--election", "/e", "--connect-timeout", "60s",
		"--zk", zks.SecureAddrs()[0], "--zk-tls-ca", files.CAFile}, "")
	code := p.wait(90 * time.Second)
	stderr := strings.TrimSpace(p.err.String())
	const want = "refused the TLS connection with alert"
	if code != 1 || strings.Count(stderr, "\n") != 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--zk-tls-cert") {
		t.Fatalf("exit %d, stderr %q; want 1 and one line with %q naming --zk-tls-cert", code, stderr, want)
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("took %v: the refusal waited for the connect timeout", d)
	}
	t.Logf("%v: %s", time.Since(start).Round(time.Millisecond), stderr)
}

// writeOtherCA writes a self-signed certificate that signed nothing of the
// servers' and returns its path.
func writeOtherCA(t *testing.T, dir string) string {
	cert, key := filepath.Join(dir, "other-ca.pem"), filepath.Join(dir, "other-ca-key.pem")
	writeSelfSigned(t, cert, key, 7)
	return cert
}
