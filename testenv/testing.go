package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// logTailLines is how many lines of each server's log a failed test shows.
const logTailLines = 40

// New starts a cluster for one test (as Start does, bounded by the test's
// context and 2 minutes) and registers its Close with t.Cleanup. When the
// test has failed by then, the tail of every server's log is logged first.
// It calls t.Fatal when the cluster cannot start, including when java or
// ZooKeeper is missing (the message says how to install them).
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(t.Context(), defaultStartTimeout)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("testenv: test failed; ZooKeeper logs:\n%s", c.LogTail(logTailLines))
		}
		if err := c.Close(); err != nil {
			t.Errorf("testenv: close cluster: %v", err)
		}
	})
	return c
}

// Main runs a package's tests against one cluster shared by all of them:
// it starts the cluster, stores it in *c, runs m.Run, prints the servers'
// log tails when a test failed, closes the cluster and finally checks that
// no goroutine leaked (goleak, with leakOpts). It returns the exit code for
// os.Exit. When the cluster cannot start (for example java or ZooKeeper is
// missing) it prints why and how to install them and returns 1: it never
// skips.
//
//	var zkc *testenv.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
//	}
func Main(m *testing.M, opts Options, c **Cluster, leakOpts ...goleak.Option) int {
	leakOpts = append([]goleak.Option{goleak.IgnoreCurrent()}, leakOpts...)
	cluster, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	*c = cluster
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "testenv: tests failed; ZooKeeper logs:\n%s", cluster.LogTail(logTailLines))
	}
	if err := cluster.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: close cluster: %v\n", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(leakOpts...); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: goroutines leaked: %v\n", err)
			code = 1
		}
	}
	return code
}
