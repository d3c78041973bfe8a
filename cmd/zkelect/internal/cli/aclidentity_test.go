package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestGroupACLIgnoresASharedClientCertificate: run --acl group (the
// default with --zk-auth) over TLS with the client certificate every
// client shares: a foreign SASL user holding the same certificate can
// read but writes nothing, since the ACL names the SASL identity alone,
// not the certificate's x509 subject (ZooKeeper's "auth" scheme grants
// both).
func TestGroupACLIgnoresASharedClientCertificate(t *testing.T) {
	zks := testenv.New(t, testenv.Options{TLS: &testenv.TLSOptions{ClientAuth: testenv.ClientAuthNeed},
		SASLUsers: map[string]string{"cmdgroup": "cmd-secret", "other": "other-secret"}})
	files, _ := zks.TLSFiles()
	dir := t.TempDir()
	cred := filepath.Join(dir, "zk.cred")
	if err := os.WriteFile(cred, []byte("cmdgroup:cmd-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	election, events := testPath(t)+"/run", filepath.Join(dir, "events")
	startProc(t, "run over TLS", runArgs(t, zks.SecureAddrs()[0], election, "tls-1", "--zk-tls-ca", files.CAFile,
		"--zk-tls-cert", files.CertFile, "--zk-tls-key", files.KeyFile, "--zk-auth", "sasl", "--zk-auth-file", cred,
		"--connect-timeout", "60s"), envTestChild+"="+events)
	eventually(t, 90*time.Second, "the child of run over TLS to start", func() bool { return countKind(readEvents(t, events), "start") == 1 })

	cfg, err := files.ClientConfig(true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	other, err := recipe.Connect(ctx, zks.SecureAddrs(), recipe.WithTLS(cfg), recipe.WithSASL("other", "other-secret"),
		recipe.WithConnectTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ps := participants(t, other, election)
	if len(ps) != 1 {
		t.Fatalf("participants %v; want tls-1 (anyone may read)", ps)
	}
	acl, _, err := other.GetACL(ctx, ps[0].Znode)
	if err != nil {
		t.Fatal(err)
	}
	if got := recipe.FormatACL(acl); got != "sasl:cmdgroup:cdrwa,world:anyone:r" {
		t.Errorf("ACL of the leader's znode = %s; want sasl:cmdgroup:cdrwa,world:anyone:r (no x509 entry)", got)
	}
	writes := map[string]func() error{
		"delete the leader's znode": func() error { return other.Delete(ctx, ps[0].Znode, -1) },
		"plant a candidate": func() error {
			_, err := other.Create(ctx, election+"/_c_planted-latch-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
			return err
		},
		"write the election znode":  func() error { _, err := other.Set(ctx, election, []byte("x"), -1); return err },
		"write the leader's znode":  func() error { _, err := other.Set(ctx, ps[0].Znode, []byte("x"), -1); return err },
		"delete the election znode": func() error { return other.Delete(ctx, election, -1) },
	}
	for name, write := range writes {
		if err := write(); !errors.Is(err, zk.ErrNoAuth) && !errors.Is(err, recipe.ErrACLDenied) {
			t.Errorf("a foreign SASL user with the shared certificate could %s: %v; want zk.ErrNoAuth", name, err)
		}
	}
	if ps := participants(t, other, election); len(ps) != 1 || !strings.HasPrefix(ps[0].ID, "tls-1") {
		t.Errorf("participants after the refused writes %v; want tls-1 alone", ps)
	}

	// Asked for, the certificate's identity is granted too, and the check
	// of the election path (read back after creating it) knows it as ours.
	x509Election, x509Events := testPath(t)+"/run", filepath.Join(dir, "x509-events")
	startProc(t, "run with group+x509", runArgs(t, zks.SecureAddrs()[0], x509Election, "tls-2", "--zk-tls-ca", files.CAFile,
		"--zk-tls-cert", files.CertFile, "--zk-tls-key", files.KeyFile, "--zk-auth", "sasl", "--zk-auth-file", cred,
		"--acl", "group+x509", "--connect-timeout", "60s"), envTestChild+"="+x509Events)
	eventually(t, 90*time.Second, "the child of run --acl group+x509 to start", func() bool {
		return countKind(readEvents(t, x509Events), "start") == 1
	})
	acl, _, err = other.GetACL(ctx, x509Election)
	if err != nil {
		t.Fatal(err)
	}
	if got := recipe.FormatACL(acl); !strings.Contains(got, "x509:CN=") {
		t.Errorf("ACL of the group+x509 election = %s; want an x509 entry", got)
	}
}
