// Package devcli holds zkelect-dev's commands: demo, dev and bench. They
// start real ZooKeeper servers through testenv (and so link the testing
// package and goleak), which is why the zkelect binary does not carry them.
package devcli

import "github.com/spf13/cobra"

// Commands returns the demo, dev and bench commands, for cli.MainNamed.
func Commands() []*cobra.Command {
	return []*cobra.Command{newDemoCmd(), newDevCmd(), newBenchCmd()}
}
