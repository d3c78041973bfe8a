package zkelectd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkelect/zkelect/zkelecthttp"
)

// NewMux serves /metrics from reg and, from api, /healthz (503 with
// the reason when unhealthy), /readyz, /v1/leaderships, /v1/owners and
// /v1/watch: the library's handlers (package zkelecthttp), so the daemon's
// and a library user's endpoints cannot drift.
func NewMux(reg *prometheus.Registry, api *zkelecthttp.Shards) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	api.Register(mux)
	return mux
}

// ServeHTTP listens on addr and serves h until ctx is done, then shuts down
// within five seconds. It returns once the listener is open (an error
// naming addr when it cannot be); wait blocks until the server has stopped
// and returns its error.
func ServeHTTP(ctx context.Context, addr string, h http.Handler) (bound net.Addr, wait func() error, err error) {
	return ServeHTTPS(ctx, addr, h, nil, zkelecthttp.IdleTimeout)
}

// ServeHTTPS is ServeHTTP over TLS with cfg (plain HTTP when cfg is nil),
// with zkelecthttp.NewServer's header timeout, closing a keep-alive
// connection idle for longer than idle.
func ServeHTTPS(ctx context.Context, addr string, h http.Handler, cfg *tls.Config, idle time.Duration) (bound net.Addr, wait func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w (choose another --listen address)", addr, err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	srv := zkelecthttp.NewServer(h)
	srv.IdleTimeout = idle
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
