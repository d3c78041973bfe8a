package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/recipe/watchdog"
)

// ChildArg, as the first argument, makes a program that calls RunChild a
// zkelect candidate of the side-by-side scenario (ScenarioPeers). It is
// internal: Run passes it to its own executable; nobody types it.
const ChildArg = "__zkelect-bench-candidate"

// RunChild runs the side-by-side scenario's zkelect candidate when args
// (os.Args) ask for it, returning the exit status and true; otherwise it
// returns false at once. Programs that call Run with ScenarioPeers call it
// first in main (the zkelect binary and this package's tests do), because
// Run starts each zkelect candidate as its own executable with ChildArg.
func RunChild(args []string) (int, bool) {
	if code, ok := runRouteChild(args); ok { // the routing scenario's member or router
		return code, true
	}
	if len(args) >= 2 && args[1] == fleetMemberArg { // the fleet simulation's real member
		if err := runFleetMember(args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "zkelect bench fleet member:", err)
			return 1, true
		}
		return 0, true
	}
	if len(args) < 2 || args[1] != ChildArg {
		return 0, false
	}
	if err := runCandidate(args[2:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "zkelect bench candidate:", err)
		return 1, true
	}
	return 0, true
}

// runCandidate is the zkelect candidate of the side-by-side scenario, on the
// protocol every peer speaks (see bench/peers/LatchCandidate.java), with a
// watchdog.Process (this executable again, so it must call
// watchdog.Serve first in main) where the system has one: args are
// [servers, election path, id, session timeout ms]; it prints READY once its
// candidate exists and "LEADER <microseconds since the Unix epoch>" each
// time Campaign returns a leadership (stamped then, see peerProc.await), and
// obeys "resign" (Resign, then campaign again) and "exit" (Close the
// candidate and the session) read from in; end of input is "exit".
func runCandidate(args []string, in io.Reader, out io.Writer) error {
	if len(args) != 4 {
		return errors.New("want servers, election path, id and session timeout in ms")
	}
	ms, err := strconv.Atoi(args[3])
	if err != nil || ms <= 0 {
		return fmt.Errorf("session timeout %q: want milliseconds > 0", args[3])
	}
	ctx, cancel := context.WithTimeout(context.Background(), acquireLimit)
	defer cancel()
	sess, err := recipe.Connect(ctx, strings.Split(args[0], ","),
		recipe.WithSessionTimeout(time.Duration(ms)*time.Millisecond))
	if err != nil {
		return err
	}
	if wd, err := watchdog.Start(); err == nil { // without one (not Linux), a kill waits out the session
		defer wd.Close() // after the session's Close: a kill in between still ends the session
		if err := wd.Watch(sess); err != nil {
			return err
		}
	}
	defer sess.Close()
	cand, err := recipe.NewCandidate(sess, args[1], recipe.WithParticipantID(args[2]))
	if err != nil {
		return err
	}
	defer cand.Close()
	cmds := make(chan string)
	go readCommands(in, cmds) // ends at end of input, which a process's exit brings
	if _, err := fmt.Fprintln(out, "READY"); err != nil {
		return err
	}
	return lead(cand, cmds, out)
}

// lead campaigns until told to exit: each leadership is announced on out
// and held until a command arrives.
func lead(cand *recipe.Candidate, cmds <-chan string, out io.Writer) error {
	for {
		l, err := campaignUntil(cand, cmds)
		if l == nil {
			return err
		}
		if _, err := fmt.Fprintln(out, "LEADER", time.Now().UnixMicro()); err != nil {
			return err
		}
		switch cmd, ok := <-cmds; {
		case !ok || cmd == "exit":
			return nil // the deferred Close withdraws
		case cmd == "resign":
			rctx, cancel := context.WithTimeout(context.Background(), acquireLimit)
			err := l.Resign(rctx)
			cancel()
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown command %q", cmd)
		}
	}
}

// campaignUntil campaigns until leading (returning the leadership) or until
// "exit" or the end of input arrives (returning nil, nil).
func campaignUntil(cand *recipe.Candidate, cmds <-chan string) (*recipe.Leadership, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	won := make(chan error, 1)
	var l *recipe.Leadership
	go func() {
		var err error
		l, err = cand.Campaign(ctx)
		won <- err
	}()
	for {
		select {
		case err := <-won:
			return l, err
		case cmd, ok := <-cmds:
			if !ok || cmd == "exit" {
				cancel()
				<-won
				return nil, nil
			}
		}
	}
}

// readCommands sends each line of in to cmds and closes it at the end.
func readCommands(in io.Reader, cmds chan<- string) {
	defer close(cmds)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		cmds <- strings.TrimSpace(sc.Text())
	}
}
