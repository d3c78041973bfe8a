package zxidfence_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zkelect/zkelect/zxidfence"
)

func TestMemoryMaxKeysRefusesNewKeysOnly(t *testing.T) {
	ctx := testContext(t)
	g := zxidfence.NewMemory(zxidfence.WithMaxKeys(3))
	for i := range 10 { // reads of unknown keys hold no entry
		if f, err := g.Highest(ctx, fmt.Sprintf("unknown-%d", i)); err != nil || f != (zxidfence.Fence{}) {
			t.Fatalf("Highest(unknown) = %s, %v; want the zero fence", f, err)
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := g.Do(ctx, k, zxidfence.At(1), nil); err != nil {
			t.Fatalf("Do(%s) within the bound: %v", k, err)
		}
	}
	err := g.Do(ctx, "d", zxidfence.At(1), nil)
	if !errors.Is(err, zxidfence.ErrTooManyKeys) {
		t.Fatalf("Do(d) past the bound = %v; want ErrTooManyKeys", err)
	}
	if _, err := g.AcceptGeneration(ctx, "e", 1, "test"); !errors.Is(err, zxidfence.ErrTooManyKeys) {
		t.Fatalf("AcceptGeneration(e) past the bound = %v; want ErrTooManyKeys", err)
	}
	if err := g.Do(ctx, "a", zxidfence.At(2), nil); err != nil {
		t.Fatalf("Do(a), a key already held: %v", err)
	}
	if err := g.Do(ctx, "b", zxidfence.At(0), nil); !errors.Is(err, zxidfence.ErrNoToken) {
		t.Fatalf("Do(b, no token) = %v; want ErrNoToken", err)
	}
	expectHighest(ctx, t, g, "a", zxidfence.At(2))
}

func TestMiddlewareAnswers503ForTooManyKeys(t *testing.T) {
	ctx := testContext(t)
	g := zxidfence.NewMemory(zxidfence.WithMaxKeys(1))
	reached := 0
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ })
	srv := httptest.NewServer(zxidfence.Middleware(g, func(r *http.Request) (string, error) { return r.URL.Path, nil })(h))
	t.Cleanup(srv.Close)
	if resp := put(ctx, t, clientWith(zxidfence.At(1)), srv.URL+"/a", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("first key: %s", resp.Status)
	}
	resp := put(ctx, t, clientWith(zxidfence.At(1)), srv.URL+"/b", "")
	if resp.StatusCode != http.StatusServiceUnavailable || reached != 1 {
		t.Fatalf("second key: %s, handler reached %d times; want 503 and one handler run", resp.Status, reached)
	}
	var rej zxidfence.Rejection
	if err := json.NewDecoder(resp.Body).Decode(&rej); err != nil || rej.Error != "too_many_keys" {
		t.Fatalf("rejection %+v (%v); want error too_many_keys", rej, err)
	}
}
