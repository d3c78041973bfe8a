// Command zkelect-dev is zkelect with its development commands: demo (what
// `make demo` runs), dev (a local ZooKeeper ensemble) and bench. They run
// real ZooKeeper servers through testenv, which links the testing package
// and goleak: that is why they are not in the zkelect binary.
package main

import (
	"os"

	"github.com/zkelect/zkelect/bench"
	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
	"github.com/zkelect/zkelect/cmd/zkelect/internal/devcli"
)

func main() {
	if code, ok := bench.RunChild(os.Args); ok { // a zkelect candidate of bench's peers scenario
		os.Exit(code)
	}
	os.Exit(cli.MainNamed("zkelect-dev", os.Args, devcli.Commands()...))
}
