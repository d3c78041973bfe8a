package recipe_test

import (
	"os"
	"testing"

	"github.com/zkelect/zkelect/testenv"
)

// zkc is the standalone ZooKeeper server shared by the package's tests;
// tests that break servers start their own cluster.
var zkc *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
}
