package partition

import (
	"context"
	"crypto/rand"
	"fmt"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/internal/logfields"
	"github.com/zkelect/zkelect/partition/assign"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
	"github.com/zkelect/zkelect/partition/internal/shard"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// Manager runs one leader election per shard for one member, on the
// session given to NewManager and, above MaxShardsPerSession elections, on
// sibling sessions of its own, and keeps the shards balanced across the
// live members of its root. Create it with NewManager and start it with Run. Its methods are
// safe for concurrent use.
type Manager struct {
	sess *recipe.Session
	root string
	cfg  settings
	log  zerolog.Logger
	met  *metrics
	pool *shard.Sessions // the sessions the elections run on
	// naming names the shards' candidate znodes: recipe.ShortNaming (38
	// bytes, against Curator LeaderLatch's 56, in every request, watch and
	// closeSession transaction); earlier releases used CuratorNaming, and
	// both order together.
	naming recipe.Naming
	// label is the election label of every shard's recipe metrics (see
	// shardsLabel), one string shared by all candidates.
	label string

	instance []byte // random; the member znode's data tells this Manager from another on the same session

	running atomic.Bool
	// layout is the root's shard layout, read by Run before any election
	// starts (nil before); newLayout is what Run creates a missing
	// <root>/shards with (rootdata.NewRootLayout; Flat in tests standing
	// for an older release).
	layout    atomic.Pointer[rootdata.Layout]
	newLayout rootdata.Layout
	// run holds the Run under way's runState (its loop) once it began:
	// Assigned reads its targets through it.
	run atomic.Value
	// readBounds is what this member takes from the root's records and
	// members: the bounds of its shard list (cluster.go).
	readBounds atomic.Pointer[rootdata.Bounds]

	// movedShards holds the shards whose flat election this member saw
	// gone while the root moves to buckets (layout.go).
	movedShards sync.Map
	// flatRunners holds the shards whose runner here was given the flat
	// election, until it finishes (layout.go).
	flatRunners sync.Map

	// held is the leaderships handed to OnStartedLeading (their tokens,
	// znodes and versions), by shard: the runners note them there.
	held *shard.Held

	mu       sync.Mutex
	shards   []string      // the shards to run, set by SetShards
	shardSet string        // assign.ListDigest(shards)
	changed  chan struct{} // signals a SetShards, capacity 1
}

// NewManager returns a Manager for the member cfg.MemberID under root (an
// absolute znode path such as "/apps/billing"), running its elections on
// sess. It does no I/O. It returns ErrNilSession, an error wrapping
// ErrInvalidRoot, or a *ConfigError (errors.Is ErrInvalidConfig) naming the
// invalid field.
func NewManager(sess *recipe.Session, root string, cfg Config) (*Manager, error) {
	if sess == nil {
		return nil, ErrNilSession
	}
	if err := rootdata.ValidateRoot(root); err != nil {
		return nil, err
	}
	s, err := cfg.validate(root, sess.Timeout())
	if err != nil {
		return nil, err
	}
	log := s.Logger
	if isZeroLogger(log) {
		log = sess.Logger()
	}
	reg := s.Metrics
	if reg == nil {
		reg = sess.Registerer()
	}
	log = logfields.With(log, "member", s.MemberID, "root", root)
	met := newMetrics(reg, root, s.MemberID)
	m := &Manager{
		instance:  []byte(rand.Text()),
		pool:      shard.NewSessions(sess, s.MaxShardsPerSession, s.MaxInFlight, met.sessions, log),
		naming:    recipe.ShortNaming(),
		newLayout: rootdata.NewRootLayout,
		label:     path.Join(root, rootdata.ShardsDir) + "/*",
		sess:      sess,
		root:      root,
		cfg:       s,
		log:       log,
		met:       met,
		shards:    s.shards,
		shardSet:  assign.ListDigest(s.shards),
		held:      shard.NewHeld(met.led),
		changed:   make(chan struct{}, 1),
	}
	m.met.shards.Set(float64(len(s.shards)))
	m.readBounds.Store(rootdata.NewBounds(s.shards))
	return m, nil
}

// Leaderships returns the shards this member leads now, with their fencing
// tokens: those whose OnStartedLeading has been called and whose
// leadership has not ended.
func (m *Manager) Leaderships() map[string]zxidfence.Token { return m.held.Tokens() }

// Leadership returns the leadership of shard this member holds now (its
// OnStartedLeading has been called and it has not ended), for its znode
// and version (zxidfence.LeaderOf builds the ZooKeeper guard's Leader from
// it) as well as its token; false when it leads no such shard. Inside
// OnStartedLeading, recipe.LeadershipFrom(ctx) returns the same.
func (m *Manager) Leadership(shard string) (*recipe.Leadership, bool) { return m.held.Of(shard) }

// SetShards replaces the shard ids at runtime: new shards get elections,
// removed shards stop their leadership (OnStoppedLeading with
// ErrShardRemoved) and their znodes are deleted. It returns a *ConfigError
// for an invalid or duplicate id and then changes nothing. It does not
// block on ZooKeeper.
func (m *Manager) SetShards(ids []string) error {
	if err := rootdata.ValidateShards(ids); err != nil {
		return &ConfigError{Field: "Shards", Reason: "has an invalid id", Err: err}
	}
	if err := m.checkShards(m.rootLayout(), ids); err != nil {
		return err
	}
	set := assign.ListDigest(ids)
	m.mu.Lock()
	m.shards, m.shardSet = slices.Clone(ids), set
	m.mu.Unlock()
	m.readBounds.Swap(rootdata.NewBounds(ids)).Retire() // records are read again: claims of new shards count
	m.met.shards.Set(float64(len(ids)))
	select {
	case m.changed <- struct{}{}:
	default:
	}
	return nil
}

// SessionLoad is what one of a member's ZooKeeper sessions carries (see
// Manager.Sessions): its id, the ephemeral znodes placed on it, and the
// size of its closeSession transaction.
type SessionLoad = shard.SessionLoad

// Sessions returns what each of the member's ZooKeeper sessions carries
// now, the session given to NewManager first: one entry until the
// elections outgrow MaxShardsPerSession, then one per sibling session
// opened. Siblings stay open (possibly with no elections) until Run
// returns.
func (m *Manager) Sessions() []SessionLoad {
	return m.pool.Loads(m.rootLayout().ElectionPathBytes(m.root, m.currentShards()))
}

// rootLayout returns the root's layout once Run has read it, and before
// that the layout of a new root (whose paths are the longer ones).
func (m *Manager) rootLayout() rootdata.Layout {
	if l := m.layout.Load(); l != nil {
		return *l
	}
	return rootdata.NewRootLayout
}

// checkShards returns a *ConfigError when ids do not fit the root's
// layout l: paths too long for MaxShardsPerSession, or a listing over
// jute.maxbuffer (rootdata.Layout.CheckListing, its arithmetic in the
// error).
func (m *Manager) checkShards(l rootdata.Layout, ids []string) error {
	if _, err := l.SessionCap(m.root, m.cfg.MemberID, ids, m.cfg.MaxShardsPerSession, m.cfg.JuteMaxBuffer); err != nil {
		return &ConfigError{Field: "Shards", Reason: "has ids too long for MaxShardsPerSession", Err: err}
	}
	if err := l.CheckListing(ids, m.cfg.JuteMaxBuffer); err != nil {
		return &ConfigError{Field: "Shards", Reason: fmt.Sprintf("is over ZooKeeper's limit in this root's layout (%s)", l), Err: err}
	}
	return nil
}

// currentShardSet returns the digest of the shard ids to run.
func (m *Manager) currentShardSet() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shardSet
}

// currentShards returns the shard ids to run.
func (m *Manager) currentShards() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shards
}

// Assigned returns how many shards the latest assignment gives this
// member (its share: by weight, pins included, none while drained), and
// false before Run has computed one.
func (m *Manager) Assigned() (int, bool) {
	if r, ok := m.run.Load().(runState); ok {
		return r.assigned()
	}
	return 0, false
}

// runState is what the Manager reads of the Run under way; its loop
// (loopstate.go) keeps it. Any goroutine may call its methods.
type runState interface {
	// targetOf returns the member the latest assignment targets shard to,
	// for a shard assigned here or run here ("" for another, and before
	// the first assignment).
	targetOf(shard string) string
	// assigned returns how many shards the latest assignment targets
	// here; false before the first.
	assigned() (int, bool)
}

// decided reports whether Run has computed an assignment.
func (m *Manager) decided() bool {
	_, ok := m.Assigned()
	return ok
}

// targetOf returns the member the latest assignment targets shard to, for
// a shard assigned here or run here ("" for another).
func (m *Manager) targetOf(shard string) string {
	if r, ok := m.run.Load().(runState); ok {
		return r.targetOf(shard)
	}
	return ""
}

func (m *Manager) memberPath() string { return path.Join(m.root, rootdata.MembersDir, m.cfg.MemberID) }

func (m *Manager) recordPath() string { return path.Join(m.root, rootdata.OwnersDir, m.cfg.MemberID) }

// shardsLabel is the election label of every shard's recipe metrics,
// "<root>/shards/*": one series for all shards, however many there are.
func (m *Manager) shardsLabel() string { return m.label }

// sessionClosed reports whether the session was closed: a request then
// fails with go-zookeeper's "connection closed", which is final, not the
// connection loss unreachable retries.
func (m *Manager) sessionClosed() bool {
	select {
	case <-m.sess.Done():
		return true
	default:
		return false
	}
}

// holdsID reports whether this Manager holds its member id now: its
// current session registered the member znode.
func (m *Manager) holdsID(ctx context.Context) (bool, error) {
	return rootdata.RegisteredHere(ctx, m.sess, m.memberPath(), m.sess.ID(), m.instance)
}
