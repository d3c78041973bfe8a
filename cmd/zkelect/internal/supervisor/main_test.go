package supervisor

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zkelect/zkelect/recipe/watchdog"
)

func TestMain(m *testing.M) {
	if code, ok := RunReaper(os.Args); ok { // a child started by a test in this process (see childCommand)
		os.Exit(code)
	}
	if code, ok := watchdog.Serve(os.Args); ok { // a daemon's watchdog (TestDaemonKilledEndsDescendants)
		os.Exit(code)
	}
	if dir := os.Getenv(daemonEnv); dir != "" {
		runEscapingDaemon(dir)
	}
	goleak.VerifyTestMain(m)
}
