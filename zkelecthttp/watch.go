package zkelecthttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// This file serves the hub over HTTP, read-only: /v1/owners (JSON) and
// /v1/watch (Server-Sent Events, at most a fixed number at once).

// sseKeepAlive is how often an idle /v1/watch stream gets a comment line,
// so proxies keep it open and a dead client is noticed, unless the client
// asks for another heartbeat (?heartbeat=, between minHeartbeat and
// sseKeepAlive).
const sseKeepAlive = 15 * time.Second

// minHeartbeat is the shortest heartbeat a /v1/watch client may ask for.
const minHeartbeat = 100 * time.Millisecond

// watchRetryAfter is the Retry-After, in seconds, of a /v1/watch refused
// for the stream cap.
const watchRetryAfter = "5"

// serveOwners writes the root's picture; 503 until the first one arrived.
func (h *hub) serveOwners(w http.ResponseWriter, _ *http.Request) {
	st, ready := h.owners()
	if !ready {
		http.Error(w, "not ready: the root's members, records and elections are still being read", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, st)
}

// watchStreams caps the /v1/watch streams served at once: each holds
// about 20-30 KiB and two goroutines while it lasts.
type watchStreams chan struct{}

// acquire takes a slot, or reports false when all are taken.
func (s watchStreams) acquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s watchStreams) release() { <-s }

// serveWatch streams leader changes as Server-Sent Events: an "owners"
// event with the whole picture first (unless the client resumes with the
// Last-Event-ID header, or ?last_event_id=, of this stream and still
// within the hub's ring), then one "leader" event per change, "no leader"
// included, each with its id. A shard's token never goes down in the
// hub's stream (partition.WatchCluster reports the elections' leaders,
// whose tokens are their candidates' czxids). The stream ends when
// the hub stops or the client falls too far behind; clients reconnect
// with the last id they saw. An idle stream gets a comment line every
// heartbeat (?heartbeat=, 100ms to 15s; 15s by default) while the
// picture is in sync (partition.ClusterSync: the member's session
// connected, and the root listed and read again since its last
// reconnect, as partition/routing's ZooKeeper source vouches for its
// view), none while it is not: a client counting heartbeats as freshness
// (partition/routing) sees a cut-off daemon's view go stale, and stay so
// after the reconnect until the changes made meanwhile have been read.
// Beyond the stream cap it answers 503 with the cap and a Retry-After;
// while the picture is not in sync, 503 too.
func (h *hub) serveWatch(streams watchStreams, w http.ResponseWriter, req *http.Request) {
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
	beat, err := heartbeatOf(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !h.live() {
		http.Error(w, "not in sync: the member's ZooKeeper session is cut off, or its picture is not read again since a reconnect; it is not vouched for", http.StatusServiceUnavailable)
		return
	}
	if !streams.acquire() {
		w.Header().Set("Retry-After", watchRetryAfter)
		http.Error(w, fmt.Sprintf("too many /v1/watch streams: %d already open, the cap; retry later", cap(streams)), http.StatusServiceUnavailable)
		return
	}
	defer streams.release()
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
	keep := time.NewTicker(beat)
	defer keep.Stop()
	for {
		select {
		case <-req.Context().Done():
			return
		case <-h.closed:
			return
		case <-keep.C:
			if !h.live() {
				continue // no heartbeat while not in sync (cut off, or not read again since a reconnect): the client sees the view as stale
			}
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

// heartbeatOf reads the heartbeat a client asks for (?heartbeat=, a Go
// duration such as 500ms): how often an idle stream gets a comment line,
// by which a client tells a live daemon from a paused or cut-off one
// (partition/routing's client does). sseKeepAlive when none.
func heartbeatOf(req *http.Request) (time.Duration, error) {
	v := req.URL.Query().Get("heartbeat")
	if v == "" {
		return sseKeepAlive, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < minHeartbeat || d > sseKeepAlive {
		return 0, fmt.Errorf("invalid heartbeat %q: want a duration from %v to %v", v, minHeartbeat, sseKeepAlive)
	}
	return d, nil
}

// lastEventID reads the id a reconnecting client saw last: nil when none,
// or when it is from another stream (another process, or this one before a
// restart: ids count per stream), which then starts from a snapshot.
func (h *hub) lastEventID(req *http.Request) (*uint64, error) {
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
func (h *hub) writeSSE(w http.ResponseWriter, seq uint64, event string, v any) {
	data, _ := json.Marshal(v) // our own types: cannot fail
	fmt.Fprintf(w, "id: %s-%d\nevent: %s\ndata: %s\n\n", h.stream, seq, event, data)
}

// writeJSON writes v as indented JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
