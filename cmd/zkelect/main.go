// Command zkelect runs leader elections on Apache ZooKeeper: a singleton job
// runner (run), a shard-ownership daemon (shards), and status, watch, prune
// and operator tools. The demo, the local ensemble (dev) and the benchmark
// (bench) are in zkelect-dev, so that this binary links no test code.
package main

import (
	"os"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args)) }
