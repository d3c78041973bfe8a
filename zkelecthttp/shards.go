package zkelecthttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// DefaultMaxWatchStreams is ShardsOptions.MaxWatchStreams's default: the
// /v1/watch streams served at once (each about 20-30 KiB and two
// goroutines while open).
const DefaultMaxWatchStreams = 100

// ErrInvalidOptions is wrapped by NewShards's errors for options it cannot
// use.
var ErrInvalidOptions = errors.New("zkelecthttp: invalid options")

// ErrAlreadyRun is Run's error when called a second time.
var ErrAlreadyRun = errors.New("zkelecthttp: Run already called")

// ShardsOptions configures Shards.
type ShardsOptions struct {
	// Root is the Manager's partition root. Required.
	Root string
	// Member is the Manager's Config.MemberID. Required.
	Member string
	// Shards is the Manager's Config.Shards: /v1/owners lists each, led or
	// not, beside every shard some member leads. Optional.
	Shards []string
	// Leaderships, when the Manager's OnStartedLeading records into it
	// (Leaderships.Hold), is what /v1/leaderships lists, with when each
	// began. Nil lists Manager.Leaderships, without since.
	Leaderships *Leaderships
	// Checks are further /healthz rules, tried in order after the
	// session's (SessionHealth). Optional.
	Checks []Check
	// OnReadiness, if set, is called with every verdict of /readyz, with
	// Run's own every ReadinessInterval (so it follows the member whether
	// or not anything probes /readyz), and with false on Drain, e.g. to set
	// a gauge. It must not block.
	OnReadiness func(ready bool)
	// MaxWatchStreams caps the /v1/watch streams open at once; beyond it a
	// client gets 503 with the reason and a Retry-After. Zero selects
	// DefaultMaxWatchStreams; negative is invalid.
	MaxWatchStreams int
}

// Shards serves, for one partition member, what the zkelect shards daemon
// serves: /healthz, /readyz, /v1/leaderships, /v1/owners and /v1/watch
// (see Register). Create it with NewShards, mount it with Register and
// follow the root with Run. Its methods are safe for concurrent use.
type Shards struct {
	sess        *recipe.Session
	mgr         *partition.Manager
	opts        ShardsOptions
	health      Health
	ready       *readiness
	hub         *hub
	streams     watchStreams
	leaderships *Leaderships
	synced      *partition.ClusterSync // whether Run's picture is in sync: /v1/watch vouches for it only then
	ran         atomic.Bool
}

// NewShards returns the endpoints of the member mgr, which runs on sess
// under opts.Root. It fails, wrapping ErrInvalidOptions, on a nil session
// or Manager, an empty Root or Member, or a negative MaxWatchStreams.
func NewShards(sess *recipe.Session, mgr *partition.Manager, opts ShardsOptions) (*Shards, error) {
	switch {
	case sess == nil || mgr == nil:
		return nil, fmt.Errorf("%w: nil session or Manager", ErrInvalidOptions)
	case opts.Root == "":
		return nil, fmt.Errorf("%w: empty Root: give the Manager's root", ErrInvalidOptions)
	case opts.Member == "":
		return nil, fmt.Errorf("%w: empty Member: give the Manager's Config.MemberID", ErrInvalidOptions)
	case opts.MaxWatchStreams < 0:
		return nil, fmt.Errorf("%w: MaxWatchStreams %d: must not be negative", ErrInvalidOptions, opts.MaxWatchStreams)
	case opts.MaxWatchStreams == 0:
		opts.MaxWatchStreams = DefaultMaxWatchStreams
	}
	synced := &partition.ClusterSync{}
	return &Shards{
		sess: sess, mgr: mgr, opts: opts, synced: synced,
		health:      append(Health{SessionHealth(sess)}, opts.Checks...),
		ready:       newReadiness(sess, mgr, opts.Root, opts.Member, opts.OnReadiness),
		hub:         newHub(opts.Root, opts.Shards, synced.InSync),
		streams:     make(watchStreams, opts.MaxWatchStreams),
		leaderships: opts.Leaderships,
	}, nil
}

// Register mounts on mux:
//
//   - GET /healthz: 200 "ok", or 503 with the reason (Healthy);
//   - GET /readyz: 200 "ready", or 503 while registering, before the first
//     balance, or draining (Ready);
//   - GET /v1/leaderships: the leaderships this member holds, JSON
//     []Leadership ordered by shard;
//   - GET /v1/owners: the root's picture, JSON Owners; 503 until Run read
//     it first;
//   - GET /v1/watch: leader changes as Server-Sent Events: an "owners"
//     event (Owners) first unless the client resumes with Last-Event-ID
//     (or ?last_event_id=) within the last 8192 events, then one "leader"
//     event (LeaderEvent) per change, each with the id <stream>-<n>, and
//     a heartbeat comment while Run's picture is in sync
//     (partition.ClusterSync: the session connected and the root read
//     again since its last reconnect); at most MaxWatchStreams at once,
//     503 beyond, and 503 while the picture is not in sync.
//
// It panics, as http.ServeMux does, if a pattern is already registered.
func (s *Shards) Register(mux *http.ServeMux) {
	mux.Handle("GET /healthz", s.health)
	mux.HandleFunc("GET /readyz", s.serveReady)
	mux.HandleFunc("GET /v1/leaderships", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.Leaderships()) })
	mux.HandleFunc("GET /v1/owners", s.hub.serveOwners)
	mux.HandleFunc("GET /v1/watch", func(w http.ResponseWriter, req *http.Request) { s.hub.serveWatch(s.streams, w, req) })
}

// Run follows the root as the member reads it (Manager.WatchCluster:
// within the bounds of its shard list) for /v1/owners and /v1/watch, and
// evaluates readiness every ReadinessInterval for OnReadiness, until ctx
// is done, then ends every stream and returns nil. A cut from ZooKeeper
// (connection loss, the session expired and replaced), even past the
// session timeout and at Run's start, is waited out: /v1/owners keeps the
// last picture and /v1/watch is not vouched for until the root has been
// read again. Run ends early, ending every stream and returning
// WatchCluster's error, only when following cannot go on: the session
// closed (wrapping recipe.ErrSessionClosed) or ended for good (its
// EndErr), or ZooKeeper refused the watch or a read (an ACL, a server
// before 3.6); the member itself may run on. Call it once: a second call
// returns ErrAlreadyRun.
func (s *Shards) Run(ctx context.Context) error {
	if s.ran.Swap(true) {
		return ErrAlreadyRun
	}
	ctx, cancel := context.WithCancel(ctx)
	readyDone := make(chan struct{})
	go func() { defer close(readyDone); s.ready.follow(ctx, ReadinessInterval) }()
	defer func() { cancel(); <-readyDone }()
	return s.hub.follow(ctx, func(ctx context.Context, fn func(partition.ClusterChange)) error {
		return s.mgr.WatchClusterChanges(ctx, fn, s.synced)
	})
}

// Drain makes /readyz answer 503 from now on: the member is stopping
// (call it when a stop begins, before the handoffs).
func (s *Shards) Drain() { s.ready.drain() }

// Healthy returns nil, or why the member is unhealthy: /healthz's verdict.
func (s *Shards) Healthy() error { return s.health.Healthy() }

// Ready reports /readyz's verdict; it reads the member znodes, bounded by
// ctx.
func (s *Shards) Ready(ctx context.Context) bool { return s.ready.ready(ctx) }

// Leaderships returns what /v1/leaderships lists now.
func (s *Shards) Leaderships() []Leadership {
	if s.leaderships != nil {
		return s.leaderships.List()
	}
	held := s.mgr.Leaderships()
	out := make([]Leadership, 0, len(held))
	for shard, tok := range held {
		out = append(out, Leadership{Shard: shard, Member: s.opts.Member, Token: tok.Decimal(),
			TokenHex: tok.Hex(), EpochCounter: tok.EpochCounter()})
	}
	sortByShard(out)
	return out
}

func (s *Shards) serveReady(w http.ResponseWriter, req *http.Request) {
	if !s.Ready(req.Context()) {
		http.Error(w, "not ready: registering, waiting for the first balance, or draining", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}
