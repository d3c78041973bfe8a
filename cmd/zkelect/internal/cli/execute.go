// Package cli is the zkelect command line: its commands (run, shards,
// status, watch, prune, fence, version and the operator verbs), their flags
// and the wiring of what they run, which is package zkelectd's (the daemon)
// and package supervisor's (a child). cmd/zkelect is a short main over it; cmd/zkelect/zkelect-dev adds the demo, dev and bench commands, which
// link testenv (and so the testing package and goleak) into that binary only.
package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/zkelect/zkelect/recipe/watchdog"
)

// Main runs zkelect with args (os.Args) and returns the process exit
// status: MainNamed("zkelect", args), whose demo, dev and bench say they
// are in zkelect-dev.
func Main(args []string) int { return MainNamed("zkelect", args) }

// MainNamed runs the binary called name (its help and errors say so) with
// args (os.Args) and returns the process exit status: the reaper of a
// child or the watchdog of a run or shards process when args ask for one,
// else the command tree, with extra commands beside zkelect's own (without
// them, demo, dev and bench say they are in zkelect-dev). A failure is
// printed as one line on stderr.
func MainNamed(name string, args []string, extra ...*cobra.Command) int {
	if code, ok := runReaper(args); ok {
		return code
	}
	if code, ok := watchdog.Serve(args); ok { // the watchdog of a run or shards process
		return code
	}
	// Log timestamps to the millisecond; failovers take a few seconds.
	zerolog.TimeFieldFormat = time.RFC3339Nano
	root := newRootCmd()
	root.Use = name
	root.AddCommand(extra...)
	if len(extra) == 0 { // zkelect itself: say where demo, dev and bench went
		root.AddCommand(movedCmd("demo"), movedCmd("dev"), movedCmd("bench"))
	}
	root.SetArgs(args[1:])
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, name+":", oneLine(withAuthHint(err).Error()))
		return exitCode(err)
	}
	return 0
}

// oneLine joins the lines of a multi-line error message (some drivers
// report one line per address tried) with "; ", so every failure is one
// line on stderr.
func oneLine(msg string) string {
	lines := strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "; ")
}
