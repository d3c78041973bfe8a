package cli

import "github.com/spf13/pflag"

// watchdogUsage is the --watchdog flag's help.
const watchdogUsage = "on Linux, a watchdog process kills this process's children and closes its ZooKeeper session " +
	"the moment this process is killed, so successors lead at once instead of a session timeout later " +
	"(a paused process is alive and left alone; not over TLS: it closes sessions over plain TCP only)"

// registerWatchdog adds --watchdog (default on) to a command that leads.
func registerWatchdog(fs *pflag.FlagSet, on *bool) { fs.BoolVar(on, "watchdog", true, watchdogUsage) }
