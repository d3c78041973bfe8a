package chaos

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// TestMain plays a chaos member when the test binary is re-executed with
// MemberEnv set; otherwise it runs the tests and checks for leaks.
func TestMain(m *testing.M) {
	if js := os.Getenv(MemberEnv); js != "" {
		os.Exit(memberMain(js))
	}
	goleak.VerifyTestMain(m)
}

// memberMain runs one member until SIGTERM or SIGINT.
func memberMain(js string) int {
	cfg, err := ParseMemberConfig(js)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Printf("member %s (%s) running, pid %d\n", cfg.Member, cfg.Role, os.Getpid())
	if err := RunMember(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("member %s stopped cleanly\n", cfg.Member)
	return 0
}
