package zxidfence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// HTTP header names that carry a fence.
const (
	// HeaderToken carries the fencing token, as Token.Decimal (any form
	// ParseToken accepts is read).
	HeaderToken = "Fencing-Token"
	// HeaderGeneration carries the fence's generation in decimal; it is
	// omitted for generation 0.
	HeaderGeneration = "Fencing-Generation"
)

// SetHeader sets f's fencing headers on h.
func SetHeader(h http.Header, f Fence) {
	h.Set(HeaderToken, f.Token.Decimal())
	if f.Generation != 0 {
		h.Set(HeaderGeneration, strconv.FormatUint(f.Generation, 10))
	} else {
		h.Del(HeaderGeneration)
	}
}

// FenceFromHeader reads the fence in h. A missing or empty Fencing-Token
// returns an error wrapping ErrNoToken (as does a zero token); an
// unparsable token or generation returns one wrapping ErrInvalidToken.
func FenceFromHeader(h http.Header) (Fence, error) {
	raw := h.Get(HeaderToken)
	if raw == "" {
		return Fence{}, fmt.Errorf("%w: no %s header", ErrNoToken, HeaderToken)
	}
	tok, err := ParseToken(raw)
	if err != nil {
		return Fence{}, fmt.Errorf("%s header: %w", HeaderToken, err)
	}
	if tok.IsZero() {
		return Fence{}, fmt.Errorf("%w: %s header is zero", ErrNoToken, HeaderToken)
	}
	f := Fence{Token: tok}
	if g := h.Get(HeaderGeneration); g != "" {
		if f.Generation, err = strconv.ParseUint(g, 10, 64); err != nil {
			return Fence{}, fmt.Errorf("%w: %s header %q is not an unsigned decimal", ErrInvalidToken, HeaderGeneration, g)
		}
	}
	return f, nil
}

// Transport is an http.RoundTripper that sends every request with the
// fencing headers of the writer's current fence.
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Fence returns the fence to send with a request, given the request's
	// context (a leader usually returns its leadership's token, and an
	// error once leadership is lost, which fails the request unsent).
	Fence func(ctx context.Context) (Fence, error)
}

// RoundTrip implements http.RoundTripper. It does not modify r. A missing
// Fence func or a zero token fails with an error wrapping ErrNoToken.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	f, err := t.fence(r.Context())
	if err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	r2 := r.Clone(r.Context())
	SetHeader(r2.Header, f)
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r2)
}

func (t *Transport) fence(ctx context.Context) (Fence, error) {
	if t.Fence == nil {
		return Fence{}, fmt.Errorf("%w: Transport.Fence is nil", ErrNoToken)
	}
	f, err := t.Fence(ctx)
	if err != nil {
		return Fence{}, fmt.Errorf("zxidfence: fence for request: %w", err)
	}
	if f.Token.IsZero() {
		return Fence{}, fmt.Errorf("%w: Transport.Fence returned no token", ErrNoToken)
	}
	return f, nil
}

// ResponseError turns a rejection written by Middleware back into the
// guard's error: for 409 a *StaleTokenError or *GenerationError, for 400 an
// error wrapping ErrNoToken, ErrInvalidToken or ErrInvalidKey. It returns nil
// for any other status, and for a 409 or 400 whose body is not a Rejection
// (then resp.Body still reads the whole body). When it returns an error it
// has read and closed resp.Body.
func ResponseError(resp *http.Response) error {
	if resp.StatusCode != http.StatusConflict && resp.StatusCode != http.StatusBadRequest {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	var rej Rejection
	if err != nil || json.Unmarshal(body, &rej) != nil || rej.Error == "" {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		return nil
	}
	_ = resp.Body.Close()
	return rej.err()
}

func (r Rejection) err() error {
	switch r.Error {
	case reasonStale:
		return &StaleTokenError{Key: r.Key, Presented: r.Presented.fence(), Highest: r.Highest.fence()}
	case reasonGeneration:
		return &GenerationError{Key: r.Key, Presented: r.Presented.fence(), Current: r.Highest.fence()}
	case reasonNoToken:
		return remote(ErrNoToken, r.Message)
	case reasonMalformed:
		return remote(ErrInvalidToken, r.Message)
	case reasonInvalidKey:
		return remote(ErrInvalidKey, r.Message)
	}
	return errors.New("zxidfence: request refused: " + r.Message)
}

// remoteError is a refusal read back from a Rejection: it reads as the
// server's message and matches sentinel with errors.Is.
type remoteError struct {
	sentinel error
	msg      string
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// remote returns the error for a rejection with message msg, which the
// server built by wrapping sentinel: msg already names it, so it is not
// prefixed again. A message that does not is prefixed with it.
func remote(sentinel error, msg string) error {
	if strings.Contains(msg, sentinel.Error()) {
		return &remoteError{sentinel: sentinel, msg: msg}
	}
	return fmt.Errorf("%w: %s", sentinel, msg)
}
