package main

import (
	"context"
	"errors"
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
