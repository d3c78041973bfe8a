package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// exitError carries a process exit status through cobra's error path, for
// commands (such as run) that exit with their child's status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode maps an error returned by a command to the process exit status.
func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

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
