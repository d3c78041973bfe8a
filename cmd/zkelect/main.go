// Command zkelect runs leader elections on Apache ZooKeeper: a singleton job
// runner (run), a shard-ownership daemon (shards), status and watch tools, a
// benchmark (bench) and a local ensemble for development (dev).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
)

func main() {
	if code, ok := runReaper(os.Args); ok {
		os.Exit(code)
	}
	// Log timestamps to the millisecond; failovers take a few seconds.
	zerolog.TimeFieldFormat = time.RFC3339Nano
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "zkelect:", err)
		os.Exit(exitCode(err))
	}
}
