package shard

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// Held is the leaderships a member's runners hold, by shard: each is
// added before its OnStartedLeading is called and removed before its
// OnStoppedLeading is. The runners are its only writers; the member's
// API (partition's Manager.Leaderships and Leadership) reads it. It is
// safe for concurrent use.
type Held struct {
	mu   sync.Mutex
	by   map[string]*recipe.Leadership
	size prometheus.Gauge // how many are held; nil: not exported
}

// NewHeld returns no leaderships, their count exported on size (may be
// nil).
func NewHeld(size prometheus.Gauge) *Held {
	return &Held{by: map[string]*recipe.Leadership{}, size: size}
}

// set notes lead as shard's leadership.
func (h *Held) set(shard string, lead *recipe.Leadership) {
	h.mu.Lock()
	h.by[shard] = lead
	n := len(h.by)
	h.mu.Unlock()
	h.count(n)
}

// clear forgets shard's leadership.
func (h *Held) clear(shard string) {
	h.mu.Lock()
	delete(h.by, shard)
	n := len(h.by)
	h.mu.Unlock()
	h.count(n)
}

func (h *Held) count(n int) {
	if h.size != nil {
		h.size.Set(float64(n))
	}
}

// Of returns shard's leadership held now; false when none.
func (h *Held) Of(shard string) (*recipe.Leadership, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.by[shard]
	return l, ok
}

// Tokens returns the shards led now with their fencing tokens, in a new
// map.
func (h *Held) Tokens() map[string]zxidfence.Token {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]zxidfence.Token, len(h.by))
	for s, l := range h.by {
		out[s] = l.Token()
	}
	return out
}
