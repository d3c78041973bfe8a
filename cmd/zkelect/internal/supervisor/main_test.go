package supervisor

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if code, ok := RunReaper(os.Args); ok { // a child started by a test in this process (see childCommand)
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}
