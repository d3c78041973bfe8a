// Command zkelect runs leader elections on Apache ZooKeeper: a singleton job
// runner (run), a shard-ownership daemon (shards), status and watch tools, a
// benchmark (bench) and a local ensemble for development (dev).
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/bench"
	"github.com/zkelect/zkelect/recipe/watchdog"
)

func main() {
	if code, ok := runReaper(os.Args); ok {
		os.Exit(code)
	}
	if code, ok := watchdog.Serve(os.Args); ok { // the watchdog of a run or shards process
		os.Exit(code)
	}
	if code, ok := bench.RunChild(os.Args); ok { // a zkelect candidate of bench's peers scenario
		os.Exit(code)
	}
	// Log timestamps to the millisecond; failovers take a few seconds.
	zerolog.TimeFieldFormat = time.RFC3339Nano
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "zkelect:", oneLine(withAuthHint(err).Error()))
		os.Exit(exitCode(err))
	}
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
