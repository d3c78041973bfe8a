package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// waitTimeout is a generous bound on anything a test waits for.
const waitTimeout = 60 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// assertDead fails the test when any of pids still exists.
func assertDead(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Close (kill 0: %v)", pid, err)
		}
	}
}

func TestStandaloneStartsServesAndStops(t *testing.T) {
	ctx := testContext(t)
	begin := time.Now()
	c, err := testenv.Start(ctx, testenv.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("standalone server serving after %v", time.Since(begin).Round(time.Millisecond))
	defer c.Close()

	if got := len(c.Addrs()); got != 1 {
		t.Fatalf("Addrs() has %d entries, want 1", got)
	}
	if c.ConnectString() != c.Addrs()[0] {
		t.Errorf("ConnectString() = %q, want %q", c.ConnectString(), c.Addrs()[0])
	}
	if c.TickTime() != testenv.DefaultTickTime {
		t.Errorf("TickTime() = %v, want %v", c.TickTime(), testenv.DefaultTickTime)
	}
	reply, err := c.FourLetterWord(ctx, 0, "ruok")
	if err != nil || reply != "imok" {
		t.Fatalf("ruok = %q, %v; want imok", reply, err)
	}
	srvr, err := c.FourLetterWord(ctx, 0, "srvr")
	if err != nil || !strings.Contains(srvr, "Mode: standalone") {
		t.Fatalf("srvr = %q, %v; want Mode: standalone", srvr, err)
	}
	pid := c.PID(0)
	if pid == 0 {
		t.Fatal("PID(0) = 0 for a running server")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	assertDead(t, pid)
	if _, err := c.FourLetterWord(ctx, 0, "ruok"); !errors.Is(err, testenv.ErrClosed) {
		t.Errorf("FourLetterWord after Close: %v, want ErrClosed", err)
	}
}

func TestBadOptionsAreRejected(t *testing.T) {
	for _, tc := range []struct {
		opts  testenv.Options
		field string
	}{
		{testenv.Options{Servers: -1}, "Servers"},
		{testenv.Options{Servers: 10}, "Servers"},
		{testenv.Options{TickTime: time.Millisecond}, "TickTime"},
		{testenv.Options{TickTime: 100*time.Millisecond + time.Microsecond}, "TickTime"},
		{testenv.Options{MinSessionTimeout: 2 * time.Second, MaxSessionTimeout: time.Second}, "MaxSessionTimeout"},
		{testenv.Options{MaxSessionTimeout: time.Millisecond}, "MaxSessionTimeout"}, // below the default minimum of 2 ticks: ZooKeeper crashed
		{testenv.Options{MaxSessionTimeout: 300*time.Millisecond + time.Microsecond}, "MaxSessionTimeout"},
		{testenv.Options{MinSessionTimeout: -time.Second}, "MinSessionTimeout"},
		{testenv.Options{Heap: "lots"}, "Heap"},
		{testenv.Options{Heap: "16m"}, "Heap"},
		{testenv.Options{Heap: "0"}, "Heap"},
		{testenv.Options{Heap: "512mb"}, "Heap"},
		{testenv.Options{SpareServers: 1}, "SpareServers"}, // spares need DynamicConfig
		{testenv.Options{Servers: 3, DynamicConfig: true, QuorumRelays: true}, "QuorumRelays"},
	} {
		_, err := testenv.Start(t.Context(), tc.opts)
		var oe *testenv.OptionsError
		if !errors.Is(err, testenv.ErrBadOptions) || !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("Start(%+v) = %v, want an *OptionsError for %s wrapping ErrBadOptions", tc.opts, err, tc.field)
		}
		if verr := tc.opts.Validate(); verr == nil || verr.Error() != fmt.Sprint(err) {
			t.Errorf("Validate(%+v) = %v, want Start's error %v", tc.opts, verr, err)
		}
	}
}

func TestHeapSetsEachServersMaxHeap(t *testing.T) {
	c := testenv.New(t, testenv.Options{Heap: "48m"})
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.PID(0)))
	if err != nil {
		t.Skipf("no /proc to read the server's command line: %v", err)
	}
	args := strings.Split(string(b), "\x00")
	if !slices.Contains(args, "-Xmx48m") || slices.Contains(args, "-Xmx"+testenv.DefaultHeap) {
		t.Fatalf("server command line %q; want -Xmx48m only", args)
	}
}

func TestSystemPropertiesReachEachServersJVM(t *testing.T) {
	if err := (testenv.Options{SystemProperties: map[string]string{"a=b": "c"}}).Validate(); !errors.Is(err, testenv.ErrBadOptions) {
		t.Fatalf("a key with '=': %v, want ErrBadOptions", err)
	}
	c := testenv.New(t, testenv.Options{SystemProperties: map[string]string{"zookeeper.request_throttle_max_requests": "7"}})
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.PID(0)))
	if err != nil {
		t.Skipf("no /proc to read the server's command line: %v", err)
	}
	if args := strings.Split(string(b), "\x00"); !slices.Contains(args, "-Dzookeeper.request_throttle_max_requests=7") {
		t.Fatalf("server command line %q; want the system property", args)
	}
}

func TestStandaloneRestartKeepsDataAndAddress(t *testing.T) {
	ctx := testContext(t)
	c := testenv.New(t, testenv.Options{})
	addr := c.Addrs()[0]
	cl := connect(t, c.ConnectString(), 2*time.Second)
	cl.mustCreate(t, "/durable", 0)

	old := c.PID(0)
	if err := c.Stop(0); err != nil {
		t.Fatal(err)
	}
	assertDead(t, old)
	if err := c.Pause(0); !errors.Is(err, testenv.ErrNotRunning) {
		t.Fatalf("Pause of a stopped server = %v, want ErrNotRunning", err)
	}
	if err := c.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if c.Addrs()[0] != addr {
		t.Fatalf("address after restart %s, want %s", c.Addrs()[0], addr)
	}
	again := connect(t, c.ConnectString(), 2*time.Second)
	if ok, _, err := again.Exists("/durable"); err != nil || !ok {
		t.Fatalf("exists /durable after restart = %v, %v; want the data kept", ok, err)
	}
}

func TestIndexOutOfRange(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	if err := c.Kill(1); !errors.Is(err, testenv.ErrBadIndex) {
		t.Fatalf("Kill(1) on one server = %v, want ErrBadIndex", err)
	}
	if _, err := c.FourLetterWord(t.Context(), 0, "bad!"); !errors.Is(err, testenv.ErrBadOptions) {
		t.Fatalf("FourLetterWord(bad!) = %v, want ErrBadOptions", err)
	}
}

func TestRestartOnATakenPortFailsFast(t *testing.T) {
	c := testenv.New(t, testenv.Options{})
	if err := c.Stop(0); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", c.Addrs()[0])
	if err != nil {
		t.Fatalf("take the stopped server's port: %v", err)
	}
	defer l.Close()
	err = c.Restart(testContext(t), 0)
	if err == nil || !strings.Contains(err.Error(), "port already in use") {
		t.Fatalf("Restart on a taken port = %v, want a port-in-use error", err)
	}
}

func TestMissingSoftwareIsNamed(t *testing.T) {
	t.Run("java", func(t *testing.T) {
		t.Setenv("JAVA_HOME", "")
		t.Setenv("PATH", t.TempDir())
		_, err := testenv.Start(t.Context(), testenv.Options{})
		if !errors.Is(err, testenv.ErrJavaNotFound) || !strings.Contains(err.Error(), "apt-get install") {
			t.Fatalf("Start without java = %v, want ErrJavaNotFound naming how to install", err)
		}
	})
	t.Run("zookeeper", func(t *testing.T) {
		t.Setenv("ZOOKEEPER_HOME", t.TempDir())
		_, err := testenv.Start(t.Context(), testenv.Options{})
		if !errors.Is(err, testenv.ErrZooKeeperNotFound) || !strings.Contains(err.Error(), "ZOOKEEPER_HOME") {
			t.Fatalf("Start with an empty ZOOKEEPER_HOME = %v, want ErrZooKeeperNotFound", err)
		}
	})
}

func TestZooKeeperHomeIsUsed(t *testing.T) {
	const debianJar = "/usr/share/java/zookeeper.jar"
	if _, err := os.Stat(debianJar); err != nil {
		t.Skipf("builds a ZOOKEEPER_HOME from Debian's %s: %v", debianJar, err)
	}
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(debianJar, filepath.Join(home, "lib", "zookeeper-3.8.0.jar")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZOOKEEPER_HOME", home)
	c := testenv.New(t, testenv.Options{})
	if reply, err := c.FourLetterWord(t.Context(), 0, "ruok"); err != nil || reply != "imok" {
		t.Fatalf("ruok = %q, %v", reply, err)
	}
}
