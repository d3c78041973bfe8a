package testenv_test

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary act as a child process for process tests.
const helperEnv = "TESTENV_HELPER_PROCESS"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helperProcess())
	}
	goleak.VerifyTestMain(m)
}

// helperProcess announces itself, then exits with status 3 on SIGTERM.
func helperProcess() int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fmt.Printf("ready pid=%d\n", os.Getpid())
	fmt.Fprintln(os.Stderr, "to stderr")
	<-term
	fmt.Println("terminated")
	return 3
}
