package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// readiness reports whether the daemon should receive work; ctx bounds
// the check (the request's).
type readiness interface {
	Ready(ctx context.Context) bool
}

// leadershipLister lists the leaderships a daemon holds now.
type leadershipLister interface{ List() []leadershipView }

// health reports why the daemon is unhealthy, or nil.
type health interface{ Healthy() error }

// newDaemonMux serves /metrics from reg, /healthz (503 with the reason when
// unhealthy), /readyz and /v1/leaderships.
func newDaemonMux(reg *prometheus.Registry, ready readiness, healthy health, list leadershipLister) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := healthy.Healthy(); err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, req *http.Request) {
		if !ready.Ready(req.Context()) {
			http.Error(w, "not ready: registering, waiting for the first balance, or draining", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("GET /v1/leaderships", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(list.List())
	})
	return mux
}

// serveHTTP listens on addr and serves h until ctx is done, then shuts down
// within five seconds. It returns once the listener is open; wait blocks
// until the server has stopped and returns its error.
func serveHTTP(ctx context.Context, addr string, h http.Handler) (bound net.Addr, wait func() error, err error) {
	return serveHTTPS(ctx, addr, h, nil)
}

// serveHTTPS is serveHTTP over TLS with cfg (plain HTTP when cfg is nil).
func serveHTTPS(ctx context.Context, addr string, h http.Handler, cfg *tls.Config) (bound net.Addr, wait func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w (choose another --listen address)", addr, err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	stopped := make(chan error, 1)
	go func() {
		select {
		case <-ctx.Done():
		case err := <-errc:
			stopped <- err
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		stopped <- err
	}()
	return ln.Addr(), func() error { return <-stopped }, nil
}
