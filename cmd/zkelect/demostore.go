package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkelect/zkelect/zxidfence"
)

// Headers a demo worker sends with each write.
const (
	headerFencingToken = "Fencing-Token" // decimal token of the writer's leadership
	headerMember       = "Zkelect-Member"
	maxStoreBody       = 4 << 10
)

// storeValue is the last write a fenced store accepted for one shard.
type storeValue struct {
	Member string          `json:"member"`
	Token  zxidfence.Token `json:"token"`
	Value  string          `json:"value"`
	At     time.Time       `json:"at"`
}

// storeEvent is one write the store decided on.
type storeEvent struct {
	Shard     string
	Member    string
	Presented zxidfence.Token
	Highest   zxidfence.Token // set on a stale-token rejection
	Accepted  bool
}

// fencedStore is the demo's protected resource: a key-value store over HTTP,
// one key per shard, every write admitted by a zxidfence.Memory guard. A
// write presenting a token lower than the highest the store has accepted for
// that shard is refused with 409 Conflict, whatever the writer believes.
type fencedStore struct {
	guard  *zxidfence.Memory
	notify func(storeEvent) // called for every decision; may be nil

	mu     sync.Mutex
	values map[string]storeValue
}

// newFencedStore returns an empty store counting its decisions on reg.
func newFencedStore(reg prometheus.Registerer, notify func(storeEvent)) (*fencedStore, error) {
	m, err := zxidfence.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &fencedStore{
		guard:  zxidfence.NewMemory(zxidfence.WithMetrics(m)),
		notify: notify,
		values: make(map[string]storeValue),
	}, nil
}

// handler serves PUT and GET /v1/shards/{shard} and GET /v1/shards.
func (s *fencedStore) handler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /v1/shards/{shard}", s.put)
	mux.HandleFunc("GET /v1/shards", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = writeJSON(w, s.snapshot())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// put is one fenced write.
func (s *fencedStore) put(w http.ResponseWriter, r *http.Request) {
	shard, member := r.PathValue("shard"), r.Header.Get(headerMember)
	tok, err := zxidfence.ParseToken(r.Header.Get(headerFencingToken))
	if err != nil {
		http.Error(w, "missing or malformed "+headerFencingToken+" header", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxStoreBody))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	err = s.guard.Do(r.Context(), shard, zxidfence.At(tok), func(context.Context) error {
		s.mu.Lock()
		s.values[shard] = storeValue{Member: member, Token: tok, Value: string(body), At: time.Now().UTC()}
		s.mu.Unlock()
		return nil
	})
	ev := storeEvent{Shard: shard, Member: member, Presented: tok, Accepted: err == nil}
	var stale *zxidfence.StaleTokenError
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &stale):
		ev.Highest = stale.Highest.Token
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_ = writeJSON(w, map[string]string{
			"error": "stale fencing token", "shard": shard,
			"presented": stale.Presented.Token.String(), "highest": stale.Highest.Token.String(),
		})
	default:
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
	if s.notify != nil {
		s.notify(ev)
	}
}

// value returns the last accepted write for shard.
func (s *fencedStore) value(shard string) (storeValue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[shard]
	return v, ok
}

func (s *fencedStore) snapshot() map[string]storeValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]storeValue, len(s.values))
	for k, v := range s.values {
		out[k] = v
	}
	return out
}

// storeWrite is the client side: one fenced PUT of value to shard. A stale
// token is reported as an error wrapping zxidfence.ErrStaleToken.
func storeWrite(ctx context.Context, c *http.Client, base, shard, member string, tok zxidfence.Token, value string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, strings.TrimRight(base, "/")+"/v1/shards/"+shard, strings.NewReader(value))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set(headerFencingToken, tok.Decimal())
	req.Header.Set(headerMember, member)
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("write shard %s: %w", shard, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxStoreBody))
	switch resp.StatusCode {
	case http.StatusNoContent, http.StatusOK:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("write shard %s: %w: %s", shard, zxidfence.ErrStaleToken, strings.TrimSpace(string(msg)))
	}
	return fmt.Errorf("write shard %s: %s: %s", shard, resp.Status, strings.TrimSpace(string(msg)))
}

// sortedShards returns the keys of m in shard order.
func sortedShards[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return shardLess(out[i], out[j]) })
	return out
}
