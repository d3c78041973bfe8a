package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/testenv"
)

// Start a standalone server, ask it whether it is fine, and stop it.
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	reply, err := c.FourLetterWord(ctx, 0, "ruok")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply)
	// Output: imok
}

// A test that loses the reply to its create: the create is applied, the
// client sees connection loss.
func ExampleProxy_CutAfterRequest() {
	var t *testing.T // the test's
	c := testenv.New(t, testenv.Options{})
	p := c.NewProxyT(t)
	conn, _, err := zk.Connect(strings.Split(p.ConnectString(), ","), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	p.CutAfterRequest(testenv.OpCreate)
	_, err = conn.Create("/job", nil, 0, zk.WorldACL(zk.PermAll))
	fmt.Println(errors.Is(err, zk.ErrConnectionClosed)) // true, yet /job exists
}

// A test that re-executes its own binary to run one participant, then
// freezes it as a long GC pause would.
func ExampleStartProcess() {
	var t *testing.T // the test's
	p := testenv.StartProcess(t, os.Args[0], []string{"-test.run=^TestParticipant$"},
		[]string{"PARTICIPANT=1"})
	if _, err := p.WaitLine(t.Context(), func(l string) bool { return strings.HasPrefix(l, "leader") }); err != nil {
		t.Fatal(err)
	}
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
}
