package recipe_test

import (
	"os"
	"testing"

	"github.com/zkelect/zkelect/recipe/watchdog"
	"github.com/zkelect/zkelect/testenv"
)

// zkc is the standalone ZooKeeper server shared by the package's tests;
// tests that break servers start their own cluster.
var zkc *testenv.Cluster

func TestMain(m *testing.M) {
	if code, ok := watchdog.Serve(os.Args); ok { // the watchdog of watchedLeader
		os.Exit(code)
	}
	if spec := os.Getenv(envWatchedLeader); spec != "" {
		os.Exit(watchedLeader(spec))
	}
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
}
