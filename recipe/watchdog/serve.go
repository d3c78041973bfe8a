package watchdog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	proc "github.com/zkelect/zkelect/internal/watchdog"
	"github.com/zkelect/zkelect/internal/zkconn"
)

// Serve runs the watchdog when args (os.Args) ask for it (see Start),
// returning its exit status and true; otherwise it returns false at once.
// Call it first in main of a program whose Process runs its own
// executable. The watchdog exits when its parent closes it, or once it
// has closed the sessions of its dead parent.
func Serve(args []string) (int, bool) {
	if len(args) < 2 || args[1] != Arg {
		return 0, false
	}
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "zkelect watchdog: want the parent's pid")
		return 2, true
	}
	parent, err := strconv.Atoi(args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "zkelect watchdog: parent pid %q: %v\n", args[2], err)
		return 2, true
	}
	out, err := proc.Serve(context.Background(), proc.Config{
		Parent: parent, In: os.Stdin,
		Close: func(ctx context.Context, c proc.Credentials) error {
			return zkconn.CloseSession(ctx, c.Servers, c.ID, c.Password, nil)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkelect watchdog:", err)
		return 1, true
	}
	for _, e := range out.Errors {
		if !errors.Is(e, zkconn.ErrUnknownSession) {
			fmt.Fprintf(os.Stderr, "zkelect watchdog: parent %d died: %v\n", parent, e)
		}
	}
	return 0, true
}
