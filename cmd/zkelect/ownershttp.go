package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// This file serves the hub (ownershub.go) over HTTP, read-only:
// /v1/owners (JSON, status's shape) and /v1/watch (Server-Sent Events).

// sseKeepAlive is how often an idle /v1/watch stream gets a comment line,
// so proxies keep it open and a dead client is noticed.
const sseKeepAlive = 15 * time.Second

// register adds /v1/owners and /v1/watch to mux.
func (h *ownersHub) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/owners", h.serveOwners)
	mux.HandleFunc("GET /v1/watch", h.serveWatch)
}

// serveOwners writes the root's picture; 503 until the first one arrived.
func (h *ownersHub) serveOwners(w http.ResponseWriter, _ *http.Request) {
	st, ready := h.status()
	if !ready {
		http.Error(w, "not ready: the root's members and records are still being read", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = writeJSON(w, st)
}

// serveWatch streams leader changes as Server-Sent Events: an "owners"
// event with the whole picture first (unless the client resumes with the
// Last-Event-ID header, or ?last_event_id=, of this stream and still
// within the hub's ring),
// then one "leader" event per change, "no leader" included, each with its
// id. The stream ends when the daemon stops or the client falls too far
// behind; clients reconnect with the last id they saw.
func (h *ownersHub) serveWatch(w http.ResponseWriter, req *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	resume, err := h.lastEventID(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	replay, snap, at, ch := h.subscribe(resume)
	defer h.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if snap != nil {
		h.writeSSE(w, at, "owners", snap)
	}
	for _, ev := range replay {
		h.writeSSE(w, ev.ID, "leader", ev)
	}
	flusher.Flush()
	keep := time.NewTicker(sseKeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-req.Context().Done():
			return
		case <-h.closed:
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev, open := <-ch:
			if !open {
				return
			}
			h.writeSSE(w, ev.ID, "leader", ev)
		}
		flusher.Flush()
	}
}

// lastEventID reads the id a reconnecting client saw last: nil when none,
// or when it is from another stream (another daemon, or this one before a
// restart: ids count per stream), which then starts from a snapshot.
func (h *ownersHub) lastEventID(req *http.Request) (*uint64, error) {
	v := req.Header.Get("Last-Event-ID")
	if v == "" {
		v = req.URL.Query().Get("last_event_id")
	}
	if v == "" {
		return nil, nil
	}
	i := strings.LastIndexByte(v, '-')
	id, err := strconv.ParseUint(v[i+1:], 10, 64)
	if i < 0 || err != nil {
		return nil, fmt.Errorf("invalid Last-Event-ID %q: want an event's id, <stream>-<number>", v)
	}
	if v[:i] != h.stream {
		return nil, nil
	}
	return &id, nil
}

// writeSSE writes one event with the id <stream>-<seq>.
func (h *ownersHub) writeSSE(w http.ResponseWriter, seq uint64, event string, v any) {
	data, _ := json.Marshal(v) // our own types: cannot fail
	fmt.Fprintf(w, "id: %s-%d\nevent: %s\ndata: %s\n\n", h.stream, seq, event, data)
}
