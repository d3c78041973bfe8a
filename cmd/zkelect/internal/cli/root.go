package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newRootCmd builds the command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "zkelect",
		Short:         "Leader election on Apache ZooKeeper, with fencing tokens",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		// Each subcommand lives in its own file: newXxxCmd() in xxx.go.
		newRunCmd(),
		newShardsCmd(),
		newStatusCmd(),
		newWatchCmd(),
		newPruneCmd(),
		newFenceCmd(),
		newVersionCmd(),
	)
	return root
}

// movedCmd stands, in the zkelect binary, for a command that lives in
// zkelect-dev (it links testenv): it says where to find it.
func movedCmd(name string) *cobra.Command {
	return &cobra.Command{
		Use: name, Hidden: true, DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("%s is in zkelect-dev, which links test servers: go run ./cmd/zkelect/zkelect-dev %s (or make %s)", name, name, name)
		},
	}
}
