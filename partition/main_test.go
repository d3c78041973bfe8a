package partition_test

import (
	"os"
	"testing"

	"github.com/zkelect/zkelect/testenv"
)

// zkc is the standalone ZooKeeper server shared by the package's tests
// (tickTime 100ms, so sessions of 200ms..2s).
var zkc *testenv.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1}, &zkc))
}
