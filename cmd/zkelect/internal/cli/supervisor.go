package cli

import (
	"context"
	"fmt"
	"syscall"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/supervisor"
)

// This file names package supervisor's pieces as the CLI's files call them
// (they predate the package), and holds interrupted, which gives a signal
// its exit status.

// childSpec describes a command to supervise (supervisor.Spec).
type childSpec = supervisor.Spec

// child is one supervised process (supervisor.Child).
type child = supervisor.Child

// startChild starts spec without the ZooKeeper credentials variable in its
// environment: the child does the leader's work, not the group's ZooKeeper
// administration.
func startChild(spec childSpec) (*child, error) {
	spec.DropEnv = append(spec.DropEnv, envZKCredentials)
	return supervisor.Start(spec)
}

// runReaper runs the reaper of a child when args ask for it.
func runReaper(args []string) (int, bool) { return supervisor.RunReaper(args) }

// childProcAttr puts a child in its own process group (supervisor.ProcAttr).
func childProcAttr() *syscall.SysProcAttr { return supervisor.ProcAttr() }

// signalContext is supervisor.SignalContext: cancelled by the first SIGINT
// or SIGTERM.
func signalContext(parent context.Context) (ctx context.Context, stop func()) {
	return supervisor.SignalContext(parent)
}

// signalOf returns the signal that cancelled ctx, or SIGTERM.
func signalOf(ctx context.Context) syscall.Signal { return supervisor.SignalOf(ctx) }

// signalName is SIGINT, SIGTERM, or the signal's description.
func signalName(sig syscall.Signal) string { return supervisor.SignalName(sig) }

// interrupted is the error of a command that a signal stopped before it
// finished what (a phrase such as "campaign in /a/b"): it exits with status
// 128+N for signal N (130 for SIGINT, 143 for SIGTERM), as a shell reports a
// process the signal killed.
// When ctx ended otherwise (a deadline), the error wraps its cause instead.
func interrupted(ctx context.Context, what string) error {
	sig, ok := supervisor.Signaled(ctx)
	if !ok {
		return fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	return &exitError{code: 128 + int(sig), err: fmt.Errorf("%s: interrupted by %s", what, signalName(sig))}
}
