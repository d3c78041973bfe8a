package zxidfence_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

// fencedServer serves PUT /<key> through Middleware over g, storing the body
// as the key's value in a map the guard's per-key exclusion protects.
func fencedServer(t testing.TB, g zxidfence.Guard) (*httptest.Server, func(key string) string) {
	values := map[string]*string{"a": new(string), "b": new(string)}
	key := func(r *http.Request) (string, error) {
		k := strings.TrimPrefix(r.URL.Path, "/")
		if values[k] == nil {
			return "", errors.New("unknown resource " + k)
		}
		return k, nil
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		k, _ := key(r)
		*values[k] = string(b)
		w.Header().Set("X-Stored", k)
		w.WriteHeader(http.StatusCreated)
	})
	srv := httptest.NewServer(zxidfence.Middleware(g, key)(h))
	t.Cleanup(srv.Close)
	return srv, func(k string) string { return *values[k] }
}

func put(ctx context.Context, t testing.TB, client *http.Client, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func clientWith(f zxidfence.Fence) *http.Client {
	return &http.Client{Transport: &zxidfence.Transport{
		Fence: func(context.Context) (zxidfence.Fence, error) { return f, nil },
	}}
}

func TestHTTPMiddlewareRefusesStaleWithBothTokens(t *testing.T) {
	ctx := testContext(t)
	srv, value := fencedServer(t, zxidfence.NewMemory())
	if resp := put(ctx, t, clientWith(zxidfence.At(0x200000001)), srv.URL+"/a", "by B"); resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Stored") != "a" {
		t.Fatalf("B's write: %s", resp.Status)
	}
	resp := put(ctx, t, clientWith(zxidfence.At(0x100000005)), srv.URL+"/a", "by A")
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("A's stale write: %s; want 409", resp.Status)
	}
	var rej zxidfence.Rejection
	if err := json.NewDecoder(resp.Body).Decode(&rej); err != nil {
		t.Fatal(err)
	}
	if rej.Error != "stale" || rej.Key != "a" || rej.Presented.Zxid != "0x100000005" || rej.Highest.Zxid != "0x200000001" ||
		rej.Presented.Epoch != 1 || rej.Presented.Counter != 5 || rej.Highest.Token != 0x200000001 {
		t.Fatalf("rejection body %+v %+v %+v does not name both tokens", rej, *rej.Presented, *rej.Highest)
	}
	if got := value("a"); got != "by B" {
		t.Fatalf("resource holds %q; want B's value", got)
	}
}

func TestHTTPResponseErrorRebuildsTheGuardError(t *testing.T) {
	ctx := testContext(t)
	srv, _ := fencedServer(t, zxidfence.NewMemory())
	put(ctx, t, clientWith(zxidfence.At(9)), srv.URL+"/b", "x")
	err := zxidfence.ResponseError(put(ctx, t, clientWith(zxidfence.At(3)), srv.URL+"/b", "y"))
	var stale *zxidfence.StaleTokenError
	if !errors.As(err, &stale) || stale.Presented != zxidfence.At(3) || stale.Highest != zxidfence.At(9) || stale.Key != "b" {
		t.Fatalf("ResponseError = %v; want *StaleTokenError 3 < 9 for b", err)
	}
	if err := zxidfence.ResponseError(put(ctx, t, clientWith(zxidfence.At(10)), srv.URL+"/b", "z")); err != nil {
		t.Fatalf("ResponseError on 201 = %v", err)
	}
}

func TestHTTPMiddlewareRefusesMissingOrMalformedHeaders(t *testing.T) {
	ctx := testContext(t)
	srv, value := fencedServer(t, zxidfence.NewMemory())
	tests := []struct {
		name   string
		header map[string]string
		path   string
		want   error
	}{
		{"missing token", nil, "/a", zxidfence.ErrNoToken},
		{"zero token", map[string]string{"Fencing-Token": "0"}, "/a", zxidfence.ErrNoToken},
		{"malformed token", map[string]string{"Fencing-Token": "-5"}, "/a", zxidfence.ErrInvalidToken},
		{"malformed generation", map[string]string{"Fencing-Token": "5", "Fencing-Generation": "x"}, "/a", zxidfence.ErrInvalidToken},
		{"unknown resource", map[string]string{"Fencing-Token": "5"}, "/nope", zxidfence.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+tt.path, strings.NewReader("bad"))
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %s; want 400", resp.Status)
			}
			err = zxidfence.ResponseError(resp)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ResponseError = %v; want %v", err, tt.want)
			}
			if n := strings.Count(err.Error(), tt.want.Error()); n != 1 {
				t.Fatalf("ResponseError reads %q: names %q %d times; want once", err, tt.want, n)
			}
		})
	}
	if value("a") != "" {
		t.Fatalf("a refused request reached the handler: %q", value("a"))
	}
}

func TestHTTPGenerationHeaderTravels(t *testing.T) {
	ctx := testContext(t)
	g := zxidfence.NewMemory()
	srv, _ := fencedServer(t, g)
	f := zxidfence.Fence{Generation: 3, Token: 7}
	if resp := put(ctx, t, clientWith(f), srv.URL+"/a", "x"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("write: %s", resp.Status)
	}
	expectHighest(ctx, t, g, "a", f)
	resp := put(ctx, t, clientWith(zxidfence.Fence{Generation: 4, Token: 1}), srv.URL+"/a", "y")
	if err := zxidfence.ResponseError(resp); !errors.Is(err, zxidfence.ErrUnknownGeneration) {
		t.Fatalf("unaccepted generation: %v; want ErrUnknownGeneration", err)
	}
}

func TestTransportRefusesToSendWithoutToken(t *testing.T) {
	ctx := testContext(t)
	lost := errors.New("leadership lost")
	for name, tr := range map[string]*zxidfence.Transport{
		"nil func":   {},
		"zero token": {Fence: func(context.Context) (zxidfence.Fence, error) { return zxidfence.Fence{}, nil }},
		"error":      {Fence: func(context.Context) (zxidfence.Fence, error) { return zxidfence.Fence{}, lost }},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
		if _, err := tr.RoundTrip(req); err == nil {
			t.Errorf("%s: RoundTrip sent a request without a token", name)
		}
	}
}

func TestHTTPResponseSentOnlyAfterSQLCommit(t *testing.T) {
	ctx := testContext(t)
	g := newSQLGuard(t, openSQLite(t), zxidfence.SQLite)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if zxidfence.TxFromContext(r.Context()) == nil {
			http.Error(w, "no transaction", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(zxidfence.Middleware(g, func(*http.Request) (string, error) { return "k", nil })(h))
	t.Cleanup(srv.Close)
	if resp := put(ctx, t, clientWith(zxidfence.At(2)), srv.URL, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %s; want the handler's 204 run inside the guard's transaction", resp.Status)
	}
	expectHighest(ctx, t, g, "k", zxidfence.At(2))
}

func TestHTTPMiddlewareAnswers503WhenTheGuardFails(t *testing.T) {
	ctx := testContext(t)
	db := openSQLite(t)
	g := newSQLGuard(t, db, zxidfence.SQLite)
	_ = db.Close() // every guard call now fails with a database error
	reached := false
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })
	srv := httptest.NewServer(zxidfence.Middleware(g, func(*http.Request) (string, error) { return "k", nil })(h))
	t.Cleanup(srv.Close)
	resp := put(ctx, t, clientWith(zxidfence.At(1)), srv.URL, "")
	if resp.StatusCode != http.StatusServiceUnavailable || reached {
		t.Fatalf("status %s, handler reached %v; want 503 without reaching the handler", resp.Status, reached)
	}
}
