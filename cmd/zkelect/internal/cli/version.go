package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time: go build -ldflags "-X main.version=v1.2.3".
// When empty, the module version recorded in the build info is used.
var version = ""

// buildVersion returns the version of this binary: the link-time version,
// else the main module's version from the build info, else "(devel)".
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// buildRevision returns the VCS revision recorded in the build info, or "".
func buildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the zkelect version",
		Example: "  zkelect version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev := buildRevision()
			if rev != "" {
				rev = " " + rev
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "zkelect %s%s %s %s/%s\n",
				buildVersion(), rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
