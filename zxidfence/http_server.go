package zxidfence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Rejection.Error values of Middleware's own: a request whose resource key
// cannot be determined, and a new key refused by a bounded guard.
const (
	reasonInvalidKey  = "invalid_key"
	reasonTooManyKeys = "too_many_keys"
)

// Rejection is the JSON body Middleware answers a refused request with.
type Rejection struct {
	// Error is the reason: "stale" or "unknown_generation" (409), "no_token",
	// "malformed" or "invalid_key" (400), "too_many_keys" or "unavailable"
	// (503).
	Error string `json:"error"`
	// Message is a human-readable sentence.
	Message string `json:"message"`
	// Key is the resource key, when known.
	Key string `json:"key,omitempty"`
	// Presented is the request's fence, when it could be read.
	Presented *FenceJSON `json:"presented,omitempty"`
	// Highest is the highest fence accepted for Key (409 only).
	Highest *FenceJSON `json:"highest,omitempty"`
}

// FenceJSON is a fence as it appears in a Rejection: the token in every
// form, so neither side needs a 64-bit-exact JSON number.
type FenceJSON struct {
	Generation uint64 `json:"generation"`
	Token      Token  `json:"token"` // decimal string
	Zxid       string `json:"zxid"`  // hex, e.g. "0x100000005"
	Epoch      uint32 `json:"epoch"`
	Counter    uint32 `json:"counter"`
}

func fenceJSON(f Fence) *FenceJSON {
	return &FenceJSON{Generation: f.Generation, Token: f.Token, Zxid: f.Token.Hex(), Epoch: f.Token.Epoch(), Counter: f.Token.Counter()}
}

func (j *FenceJSON) fence() Fence {
	if j == nil {
		return Fence{}
	}
	return Fence{Generation: j.Generation, Token: j.Token}
}

// Middleware returns HTTP middleware that admits every request through g
// before its handler runs: it reads the fence from the Fencing-Token and
// Fencing-Generation headers and the resource key from key(r), and runs the
// handler inside g.Do, so handlers for one key never interleave and a
// handler runs only for a fence not lower than the highest accepted. The
// handler's response is buffered and sent only once g.Do has succeeded (for
// the SQL guard, after the commit); handlers that stream are not supported.
//
// Refusals, with a Rejection JSON body: 400 for a missing, zero or
// malformed header or a key func error or empty key; 409 Conflict for a
// stale fence or an unaccepted generation (naming both fences); 503 when
// the guard fails otherwise (such as a database error, or ErrTooManyKeys).
// No refused request reaches the handler. It accepts WithMetrics and
// WithLogger (which count and log the 400s; g counts its own decisions).
//
// Every key that key returns and g admits stays in a Memory guard for the
// guard's life (see Memory): a key func that passes client input through
// (such as the URL path) lets any client grow it. Return only keys from a
// bounded set, or give the Memory guard WithMaxKeys.
func Middleware(g Guard, key func(r *http.Request) (string, error), opts ...Option) func(http.Handler) http.Handler {
	cfg := newConfig(opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			serveFenced(cfg, g, key, next, w, r)
		})
	}
}

func serveFenced(cfg config, g Guard, key func(*http.Request) (string, error), next http.Handler, w http.ResponseWriter, r *http.Request) {
	f, err := FenceFromHeader(r.Header)
	if err != nil {
		badRequest(cfg, w, "", err)
		return
	}
	k, err := key(r)
	if err == nil && k == "" {
		err = errors.New("empty resource key")
	}
	if err != nil {
		badRequest(cfg, w, "", fmt.Errorf("%w: %w", ErrInvalidKey, err))
		return
	}
	buf := &bufferedResponse{header: http.Header{}}
	err = g.Do(r.Context(), k, f, func(ctx context.Context) error {
		next.ServeHTTP(buf, r.WithContext(ctx))
		return nil
	})
	if err != nil {
		refuse(w, k, f, err)
		return
	}
	buf.sendTo(w)
}

func badRequest(cfg config, w http.ResponseWriter, key string, err error) {
	cfg.metrics.observe(KindHTTP, key, Fence{}, err)
	logRejection(cfg.logger, KindHTTP, err)
	reason := rejectReason(err)
	if errors.Is(err, ErrInvalidKey) {
		reason = reasonInvalidKey
	}
	writeRejection(w, http.StatusBadRequest, Rejection{Error: reason, Message: err.Error(), Key: key})
}

func refuse(w http.ResponseWriter, key string, f Fence, err error) {
	rej := Rejection{Message: err.Error(), Key: key, Presented: fenceJSON(f)}
	status := http.StatusConflict
	var stale *StaleTokenError
	var gen *GenerationError
	switch {
	case errors.As(err, &stale):
		rej.Error, rej.Highest = reasonStale, fenceJSON(stale.Highest)
	case errors.As(err, &gen):
		rej.Error, rej.Highest = reasonGeneration, fenceJSON(gen.Current)
	case errors.Is(err, ErrTooManyKeys):
		rej.Error, status = reasonTooManyKeys, http.StatusServiceUnavailable
	default:
		rej.Error, status = "unavailable", http.StatusServiceUnavailable
	}
	writeRejection(w, status, rej)
}

func writeRejection(w http.ResponseWriter, status int, rej Rejection) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(rej)
}

// bufferedResponse holds a handler's response until the guard has decided.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

func (b *bufferedResponse) sendTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
