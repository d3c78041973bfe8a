package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/zkelectd"
	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file exports to zkelect-dev's commands (package devcli) the few
// pieces of the CLI they share; the CLI's own files keep their names.

// DefaultSessionTimeout is the CLI's --session-timeout default.
const DefaultSessionTimeout = defaultSessionTimeout

// EnvParticipantID names the participant (member) id in a child's
// environment.
const EnvParticipantID = envParticipantID

// ExitError is an error carrying a process exit status (see Main).
type ExitError = exitError

// NewExitError returns an error that makes Main exit with code.
func NewExitError(code int, err error) error { return &exitError{code: code, err: err} }

// SignalContext is cancelled by the first SIGINT or SIGTERM (see
// signalContext).
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	return signalContext(parent)
}

// ServeHTTP listens on addr and serves h until ctx is done (see
// zkelectd.ServeHTTP).
func ServeHTTP(ctx context.Context, addr string, h http.Handler) (bound net.Addr, wait func() error, err error) {
	return zkelectd.ServeHTTP(ctx, addr, h)
}

// ChildProcAttr puts a child in its own process group, killed if this
// process dies first (see childProcAttr).
func ChildProcAttr() *syscall.SysProcAttr { return childProcAttr() }

// ShellQuote quotes s for /bin/sh.
func ShellQuote(s string) string { return zkelectd.ShellQuote(s) }

// WriteJSON writes v to w as indented JSON.
func WriteJSON(w io.Writer, v any) error { return writeJSON(w, v) }

// SortedShards returns the keys of m in shard order.
func SortedShards[V any](m map[string]V) []string { return sortedShards(m) }

// LeadCounts returns how many shards each member leads (see leadCounts).
func LeadCounts(o map[string]partition.Owner) map[string]int { return leadCounts(o) }

// LedBy returns the shards member leads, with their tokens (see ledBy).
func LedBy(o map[string]partition.Owner, member string) map[string]zxidfence.Token {
	return ledBy(o, member)
}
