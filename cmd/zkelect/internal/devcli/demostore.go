package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkelect/zkelect/cmd/zkelect/internal/cli"
	"github.com/zkelect/zkelect/zxidfence"
)

// headerMember names the writing member, for the store's report only: the
// fence travels in zxidfence's Fencing-Token header.
const (
	headerMember = "Zkelect-Member"
	maxStoreBody = 4 << 10
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
// one key per shard, behind zxidfence's HTTP middleware and a Memory guard.
// A write presenting a token lower than the highest the store has accepted
// for that shard is refused with 409 Conflict, whatever the writer believes.
type fencedStore struct {
	guard   *zxidfence.Memory
	metrics *zxidfence.Metrics
	notify  func(storeEvent) // called for every decision; may be nil

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
		guard:   zxidfence.NewMemory(zxidfence.WithMetrics(m)),
		metrics: m,
		notify:  notify,
		values:  make(map[string]storeValue),
	}, nil
}

// handler serves PUT /v1/shards/{shard} (fenced), GET /v1/shards and
// GET /metrics from reg.
func (s *fencedStore) handler(reg *prometheus.Registry) http.Handler {
	fenced := zxidfence.Middleware(s.guard, func(r *http.Request) (string, error) {
		return r.PathValue("shard"), nil
	}, zxidfence.WithMetrics(s.metrics))(http.HandlerFunc(s.put))
	mux := http.NewServeMux()
	mux.Handle("PUT /v1/shards/{shard}", s.reporting(fenced))
	mux.HandleFunc("GET /v1/shards", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = cli.WriteJSON(w, s.snapshot())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// put stores one write; it runs only once the guard admitted its token,
// holding the shard's lock.
func (s *fencedStore) put(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxStoreBody))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	f, _ := zxidfence.FenceFromHeader(r.Header) // admitted, so valid
	s.mu.Lock()
	s.values[r.PathValue("shard")] = storeValue{
		Member: r.Header.Get(headerMember), Token: f.Token, Value: string(body), At: time.Now().UTC(),
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// reporting reports each decision of next to notify: accepted, or refused
// as stale with the highest token named in the middleware's answer.
func (s *fencedStore) reporting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recordingWriter{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if s.notify == nil {
			return
		}
		f, _ := zxidfence.FenceFromHeader(r.Header)
		ev := storeEvent{Shard: r.PathValue("shard"), Member: r.Header.Get(headerMember), Presented: f.Token,
			Accepted: rec.status < 300}
		var rej zxidfence.Rejection
		if rec.status == http.StatusConflict && json.Unmarshal(rec.body.Bytes(), &rej) == nil && rej.Highest != nil {
			ev.Highest = rej.Highest.Token
		}
		s.notify(ev)
	})
}

// recordingWriter remembers the status and the body of refusals.
type recordingWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *recordingWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && w.body.Len() < maxStoreBody {
		w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
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

// newStoreClient returns an HTTP client that sends every request with
// token as its fence (zxidfence.Transport).
func newStoreClient(token zxidfence.Token) *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &zxidfence.Transport{
		Fence: func(context.Context) (zxidfence.Fence, error) { return zxidfence.At(token), nil },
	}}
}

// storeWrite is one fenced PUT of value to shard through c (see
// newStoreClient). A refusal is returned as the guard's error: a stale token
// matches zxidfence.ErrStaleToken.
func storeWrite(ctx context.Context, c *http.Client, base, shard, member, value string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, strings.TrimRight(base, "/")+"/v1/shards/"+shard, strings.NewReader(value))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set(headerMember, member)
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("write shard %s: %w", shard, err)
	}
	if err := zxidfence.ResponseError(resp); err != nil {
		return fmt.Errorf("write shard %s: %w", shard, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxStoreBody))
		return fmt.Errorf("write shard %s: %s: %s", shard, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
