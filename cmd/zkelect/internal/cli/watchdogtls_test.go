package cli

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestRunKilledOverTLSSendsNothingInClear: `run` over TLS, SIGKILLed while
// leading: its watchdog, which closes sessions over plain TCP only, was
// not handed the TLS session, so nothing but TLS reaches the secure port
// (a relay in front of it counts the bytes of connections that do not
// open with a TLS handshake: 0), and the other run's child starts once the
// killed leader's session has expired, as the docs say.
func TestRunKilledOverTLSSendsNothingInClear(t *testing.T) {
	zks := testenv.New(t, testenv.Options{TLS: &testenv.TLSOptions{}, MaxSessionTimeout: 20 * time.Second})
	files, _ := zks.TLSFiles()
	relay := zks.NewTLSRelayT(t, 0)
	election, events := testPath(t), filepath.Join(t.TempDir(), "events")
	tlsArgs := []string{"--zk-tls-ca", files.CAFile, "--session-timeout", watchdogSessionTimeout.String(), "--connect-timeout", "60s"}
	p1 := startProc(t, "p1", runArgs(t, relay.Addr(), election, "p1", tlsArgs...), envTestChild+"="+events)
	eventually(t, 90*time.Second, "p1's child to start", func() bool { return countKind(readEvents(t, events), "start") == 1 })
	startProc(t, "p2", runArgs(t, zks.SecureAddrs()[0], election, "p2", tlsArgs...), envTestChild+"="+events)

	cfg, err := files.ClientConfig(false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := recipe.Connect(ctx, zks.SecureAddrs(), recipe.WithTLS(cfg), recipe.WithConnectTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eventually(t, 60*time.Second, "two participants", func() bool { return len(participants(t, s, election)) == 2 })

	start := time.Now()
	p1.signal(syscall.SIGKILL)
	eventually(t, 4*watchdogSessionTimeout, "p2's child to start once p1's session expired", func() bool {
		return countKind(readEvents(t, events), "start") == 2
	})
	t.Logf("failover after SIGKILL of a TLS leader: %s (session timeout %s)", time.Since(start), watchdogSessionTimeout)
	if n := relay.PlaintextBytes(); n != 0 {
		t.Fatalf("%d bytes reached the secure port in clear after p1's kill; want 0 (its watchdog must not close a TLS session over plain TCP)", n)
	}
	if !strings.Contains(p1.err.String(), "no watchdog for a session over TLS") {
		t.Errorf("p1 did not say it runs without a watchdog over TLS:\n%s", p1.err.String())
	}
}
