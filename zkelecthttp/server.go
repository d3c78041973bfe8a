package zkelecthttp

import (
	"net/http"
	"time"
)

// ReadHeaderTimeout is how long NewServer's server waits for a request's
// headers: a client that sends them slower is cut off (Slowloris).
const ReadHeaderTimeout = 5 * time.Second

// IdleTimeout is how long NewServer's server keeps an idle keep-alive
// connection open; a /v1/watch stream is not idle while it is open (it
// gets a comment line every 15s).
const IdleTimeout = 60 * time.Second

// NewServer returns an http.Server for h with the daemon's limits:
// ReadHeaderTimeout and IdleTimeout. Without them Go keeps an idle
// keep-alive connection forever and waits for headers as long as a client
// dribbles them. No write timeout: /v1/watch streams last.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, IdleTimeout: IdleTimeout}
}
