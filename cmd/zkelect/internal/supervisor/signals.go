// Package supervisor runs the children of zkelect run and shards: each in
// its own process group under a reaper (zkelect re-executed, a child
// subreaper) that ends the child's whole process tree, descendants that
// left the group or session included, when the child exits or zkelect
// dies; stopped with a signal and a grace before SIGKILL; and the signals
// that stop zkelect itself.
package supervisor

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// signalCause records which signal cancelled a context from SignalContext.
type signalCause struct{ sig syscall.Signal }

func (c signalCause) Error() string { return "received " + c.sig.String() }

// SignalContext returns a context cancelled by the first SIGINT or SIGTERM,
// with the signal readable through SignalOf. stop releases the signal
// handler and the goroutine that waits for it.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
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

// SignalOf returns the signal that cancelled ctx, or SIGTERM when ctx ended
// some other way.
func SignalOf(ctx context.Context) syscall.Signal {
	if sig, ok := Signaled(ctx); ok {
		return sig
	}
	return syscall.SIGTERM
}

// Signaled returns the signal that cancelled ctx (a context of
// SignalContext), and false when ctx ended some other way.
func Signaled(ctx context.Context) (syscall.Signal, bool) {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.sig, true
	}
	return 0, false
}

// SignalName is SIGINT or SIGTERM, the signals SignalContext listens to, or
// the signal's description for any other.
func SignalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
