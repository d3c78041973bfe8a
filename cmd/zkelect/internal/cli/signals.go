package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// signalCause records which signal cancelled a context from signalContext.
type signalCause struct{ sig syscall.Signal }

func (c signalCause) Error() string { return "received " + c.sig.String() }

// signalContext returns a context cancelled by the first SIGINT or SIGTERM,
// with the signal readable through signalOf. stop releases the signal
// handler and the goroutine that waits for it.
func signalContext(parent context.Context) (ctx context.Context, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case s := <-ch:
			cancel(signalCause{sig: s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
		<-done
	}
}

// signalOf returns the signal that cancelled ctx, or SIGTERM when ctx ended
// some other way.
func signalOf(ctx context.Context) syscall.Signal {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.sig
	}
	return syscall.SIGTERM
}

// interrupted is the error of a command that a signal stopped before it
// finished what (a phrase such as "campaign in /a/b"): it exits with status
// 128+N for signal N (130 for SIGINT, 143 for SIGTERM), as a shell reports a
// process the signal killed.
// When ctx ended otherwise (a deadline), the error wraps its cause instead.
func interrupted(ctx context.Context, what string) error {
	var sc signalCause
	if !errors.As(context.Cause(ctx), &sc) {
		return fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	return &exitError{code: 128 + int(sc.sig), err: fmt.Errorf("%s: interrupted by %s", what, signalName(sc.sig))}
}

// signalName is SIGINT or SIGTERM, the signals signalContext listens to, or
// the signal's description for any other.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
