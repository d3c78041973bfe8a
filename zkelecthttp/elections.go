package zkelecthttp

import (
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/zkelect/zkelect/recipe"
)

// Elections serves the health of a recipe Session and the leaderships of
// its candidates, for a process that uses recipe without partition. Create
// it with NewElections and mount it with Register; it starts no goroutine.
type Elections struct {
	sess   *recipe.Session
	cands  []*recipe.Candidate
	health Health
}

// NewElections returns the endpoints of sess (not nil) and cands, the
// candidates this process runs on it or on other sessions; checks are
// further /healthz rules, tried in order after the session's
// (SessionHealth).
func NewElections(sess *recipe.Session, cands []*recipe.Candidate, checks ...Check) *Elections {
	return &Elections{sess: sess, cands: slices.Clone(cands), health: append(Health{SessionHealth(sess)}, checks...)}
}

// Register mounts on mux:
//
//   - GET /healthz: 200 "ok", or 503 with the reason (Healthy);
//   - GET /readyz: 200 "ready" while healthy and connected
//     (recipe.Session.Connected), else 503 with the reason;
//   - GET /v1/leaderships: the candidates that lead now, JSON []Leadership
//     with Election and Member (the participant id), ordered by election.
//
// It panics, as http.ServeMux does, if a pattern is already registered.
func (e *Elections) Register(mux *http.ServeMux) {
	mux.Handle("GET /healthz", e.health)
	mux.HandleFunc("GET /readyz", e.serveReady)
	mux.HandleFunc("GET /v1/leaderships", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, e.Leaderships()) })
}

// Healthy returns nil, or why the process is unhealthy: /healthz's verdict.
func (e *Elections) Healthy() error { return e.health.Healthy() }

// Leaderships returns the candidates' current leaderships (advice: one may
// end right after).
func (e *Elections) Leaderships() []Leadership {
	out := []Leadership{}
	for _, c := range e.cands {
		l := c.Leadership()
		if l == nil {
			continue
		}
		tok := l.Token()
		out = append(out, Leadership{Election: c.Path(), Member: c.ID(), Token: tok.Decimal(),
			TokenHex: tok.Hex(), EpochCounter: tok.EpochCounter()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Election < out[j].Election })
	return out
}

func (e *Elections) serveReady(w http.ResponseWriter, _ *http.Request) {
	err := e.Healthy()
	if err == nil && !e.sess.Connected() {
		err = fmt.Errorf("disconnected from ZooKeeper")
	}
	if err != nil {
		http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}
