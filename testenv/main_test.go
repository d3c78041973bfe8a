package testenv_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/zkelect/zkelect/testenv"
)

// helperEnv makes the test binary act as a child process for process tests.
const helperEnv = "TESTENV_HELPER_PROCESS"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "1":
		os.Exit(helperProcess())
	case "cluster":
		os.Exit(helperCluster())
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

// helperCluster starts a standalone server, reports its pid and directory
// and waits to be killed.
func helperCluster() int {
	c, err := testenv.Start(context.Background(), testenv.Options{})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("server pid=%d dir=%s\n", c.PID(0), c.Dir())
	select {}
}
