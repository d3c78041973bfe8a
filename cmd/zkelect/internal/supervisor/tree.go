package supervisor

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/zkelect/zkelect/internal/proctree"
)

// treeKillWait bounds the wait for a tree's processes to die of SIGKILL:
// they die at once, unless one is of another user, whom no signal of ours
// reaches.
const treeKillWait = 5 * time.Second

// killTree kills every descendant of pid, in pid's process group or not
// (a setsid grandchild, a daemon that forked twice), and waits up to
// treeKillWait until none can run (proctree.Kill). pid is a reaper, a
// child subreaper: orphans below it stay in its tree while it lives.
func killTree(pid int) {
	ctx, cancel := context.WithTimeout(context.Background(), treeKillWait)
	defer cancel()
	if err := proctree.Kill(ctx, pid); err != nil {
		// Named on the reaper's stderr (the worker's, which the daemon
		// logs): a descendant of another user outlives the leadership.
		fmt.Fprintf(os.Stderr, "zkelect: %v\n", err)
	}
}
