package zkconn

import (
	"os"
	"testing"
	"time"

	"github.com/zkelect/zkelect/testenv"
)

// zkc is the standalone ZooKeeper server shared by the package's tests
// that need one; its sessions may last long enough (20s) that a test's
// connection does not drop under load. testenv.Main checks that no
// goroutine leaked once every test has run.
var zkc *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Servers: 1, MaxSessionTimeout: 20 * time.Second}, &zkc))
}
