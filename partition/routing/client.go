package routing

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkelect/zkelect/zxidfence"
)

// DefaultStaleAfter is Config.StaleAfter's default.
const DefaultStaleAfter = 3 * time.Second

var (
	// ErrNoLeader reports a shard without a leader in the view.
	ErrNoLeader = errors.New("routing: shard has no leader")
	// ErrStale reports a view its source has not confirmed for longer than
	// Config.StaleAfter; the route returned beside it is the last known.
	ErrStale = errors.New("routing: view is stale")
	// ErrNotReady reports a client whose source has not given a first view.
	ErrNotReady = errors.New("routing: no view yet")
	// ErrNoShards reports a Config with neither Shards nor ShardOf.
	ErrNoShards = errors.New("routing: Config.Shards or Config.ShardOf is required")
)

// Route is where one shard's requests go: its leader as the elections hold it.
type Route struct {
	Shard   string
	Member  string            // the leading member's id
	Address string            // its Config.Address ("" if it publishes none)
	Labels  map[string]string // its Config.Labels; shared, do not modify
	Token   zxidfence.Token   // the leadership's fencing token
}

// Table is the view at one moment: every led shard's route. A Table is
// never modified once handed out.
type Table struct {
	Routes map[string]Route // led shards; a shard without a leader is missing
	// Changed lists, in a Table from Subscribe, the shards whose route
	// changed (or went) since the previous Table that subscription
	// delivered; nil in the first, and in a Table from Client.Table.
	Changed []string
}

// update is a change of the view from a source: with all, routes is the
// whole view; otherwise each shard of routes takes its route and each of
// gone loses its own.
type update struct {
	all    bool
	routes map[string]Route
	gone   []string
}

// Source gives a Client its view: ZooKeeper or Daemons.
type Source interface {
	// run calls apply with each change of the view and fresh each time
	// the source confirms its view (an event, a heartbeat, a connected
	// and synced session), until ctx ends (nil) or the source fails for
	// good. apply and fresh return at once (they take the client's lock
	// only).
	run(ctx context.Context, apply func(update), fresh func()) error
	// check reports an invalid source, for New.
	check() error
	// lag is the source's view-lag histogram, for New (nil: none).
	lag(*clientMetrics)
}

// Config configures New.
type Config struct {
	// Source is where the view comes from (required).
	Source Source
	// Shards are the shard ids keys hash onto, in a fixed order: the
	// members' Config.Shards. Required unless ShardOf is set.
	Shards []string
	// ShardOf maps a key to its shard, replacing HashKey over Shards.
	ShardOf func(key string) string
	// StaleAfter is how long the source may go without confirming the view
	// before Route fails with ErrStale. 0: DefaultStaleAfter.
	StaleAfter time.Duration
	// Metrics registers the client's metrics (zkelect_routing_view_lag_seconds);
	// nil: none. A second client on the same registerer shares them.
	Metrics prometheus.Registerer
}

// Client is a router's view of a root. Its methods are safe for
// concurrent use; Run feeds it.
type Client struct {
	cfg Config

	mu      sync.Mutex
	routes  map[string]Route // the view: updated in place, under mu
	snap    *Table           // a copy of routes handed out, nil once routes changed
	ready   bool
	fresh   time.Time                // when the source last confirmed the view
	waiters map[*subscriber]struct{} // Subscribe's
	changed chan struct{}            // closed (and replaced) when the view changes: WaitLeader's
}

// subscriber is one Subscribe: the shards changed since its last Table,
// and a wake-up for its goroutine.
type subscriber struct {
	wake    chan struct{} // capacity 1
	first   bool          // no Table delivered yet
	changed map[string]bool
}

// New returns a client; Run starts following its source. It fails with
// ErrNoShards, a *HeartbeatError (Daemons given a heartbeat out of
// bounds), or an error naming a missing Source.
func New(cfg Config) (*Client, error) {
	if cfg.Source == nil {
		return nil, errors.New("routing: Config.Source is required")
	}
	if err := cfg.Source.check(); err != nil {
		return nil, err
	}
	if len(cfg.Shards) == 0 && cfg.ShardOf == nil {
		return nil, ErrNoShards
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	cfg.Shards = append([]string(nil), cfg.Shards...)
	if cfg.Metrics != nil {
		m, err := newClientMetrics(cfg.Metrics)
		if err != nil {
			return nil, err
		}
		cfg.Source.lag(m)
	}
	return &Client{cfg: cfg, routes: map[string]Route{}, waiters: map[*subscriber]struct{}{}, changed: make(chan struct{})}, nil
}

// Run follows the source until ctx ends (nil) or the source fails for
// good (its error: a closed session, no daemon given). Call it once.
func (c *Client) Run(ctx context.Context) error {
	err := c.cfg.Source.run(ctx, c.apply, c.confirm)
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("routing: %w", err)
}

// apply takes a change of the view from the source.
func (c *Client) apply(u update) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ready, c.fresh, c.snap = true, time.Now(), nil
	var changed []string
	if u.all {
		for s := range c.routes {
			if _, ok := u.routes[s]; !ok {
				changed = append(changed, s)
			}
		}
		c.routes = u.routes
	} else {
		for _, s := range u.gone {
			delete(c.routes, s)
		}
		maps.Copy(c.routes, u.routes)
	}
	changed = append(append(changed, u.gone...), slices.Collect(maps.Keys(u.routes))...)
	close(c.changed)
	c.changed = make(chan struct{})
	for sub := range c.waiters {
		for _, s := range changed {
			sub.changed[s] = true
		}
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

// confirm records that the source vouched for the view now.
func (c *Client) confirm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh = time.Now()
}

// ShardOf returns key's shard: Config.ShardOf's, else HashKey over
// Config.Shards.
func (c *Client) ShardOf(key string) string {
	if c.cfg.ShardOf != nil {
		return c.cfg.ShardOf(key)
	}
	return HashKey(key, c.cfg.Shards)
}

// Route returns the route of key's shard. It fails with ErrNotReady before
// the first view, ErrNoLeader (the route's Shard set) when the shard has
// no leader in the view, or ErrStale beside the last known route once the
// view is older than Config.StaleAfter.
func (c *Client) Route(key string) (Route, error) { return c.Leader(c.ShardOf(key)) }

// Leader returns shard's route, failing as Route does.
func (c *Client) Leader(shard string) (Route, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leaderLocked(shard)
}

// WaitRoute is Route, waiting as WaitLeader does while key's shard has no
// leader in the view.
func (c *Client) WaitRoute(ctx context.Context, key string) (Route, error) {
	return c.WaitLeader(ctx, c.ShardOf(key))
}

// WaitLeader returns shard's route as Leader does, except that while the
// view has no leader for shard (ErrNoLeader), or no view yet
// (ErrNotReady), it waits for the view to show one, as routers retry on
// NotLeader: it returns once the view shows a leader, or fails as Leader
// does once the view goes stale (ErrStale), or when ctx ends with
// Leader's error then and ctx's (both match errors.Is). ctx is the bound:
// the view shows a new leader a notification, at times plus a batched
// read, after its election (p99 under 100 ms at 10,000 shards on a loaded
// 2-core machine, bench/README.md), so a few hundred milliseconds covers
// the view's lag behind an election; a shard whose leader crashed has no
// leader until that member's session expires and a new one is elected
// (up to the members' session timeout plus the election), which only a
// bound that long waits out.
func (c *Client) WaitLeader(ctx context.Context, shard string) (Route, error) {
	for {
		c.mu.Lock()
		r, err := c.leaderLocked(shard)
		changed, ready, staleIn := c.changed, c.ready, c.cfg.StaleAfter-time.Since(c.fresh)
		c.mu.Unlock()
		if !errors.Is(err, ErrNoLeader) && !errors.Is(err, ErrNotReady) {
			return r, err
		}
		if werr := awaitChange(ctx, changed, ready, staleIn); werr != nil {
			return r, fmt.Errorf("%w (waited until %w)", err, werr)
		}
	}
}

// awaitChange waits until changed closes or, on a ready view, staleIn
// passes (the view turning stale), failing with ctx's cause if it ends
// first.
func awaitChange(ctx context.Context, changed <-chan struct{}, ready bool, staleIn time.Duration) error {
	var stale <-chan time.Time
	if ready {
		t := time.NewTimer(max(staleIn, 0) + time.Millisecond)
		defer t.Stop()
		stale = t.C
	}
	select {
	case <-changed:
	case <-stale:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// leaderLocked is Leader under c.mu.
func (c *Client) leaderLocked(shard string) (Route, error) {
	if !c.ready {
		return Route{Shard: shard}, ErrNotReady
	}
	r, ok := c.routes[shard]
	switch {
	case time.Since(c.fresh) > c.cfg.StaleAfter:
		if !ok {
			r = Route{Shard: shard}
		}
		return r, fmt.Errorf("%w: last confirmed %v ago", ErrStale, time.Since(c.fresh).Round(time.Millisecond))
	case !ok:
		return Route{Shard: shard}, ErrNoLeader
	}
	return r, nil
}

// Table returns the current view (empty before the first).
func (c *Client) Table() Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tableLocked()
}

// tableLocked returns a copy of the view, made once per change.
func (c *Client) tableLocked() Table {
	if c.snap == nil {
		c.snap = &Table{Routes: maps.Clone(c.routes)}
	}
	return *c.snap
}

// Staleness returns how long ago the source last confirmed the view (its
// age), or -1 before the first view.
func (c *Client) Staleness() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready {
		return -1
	}
	return time.Since(c.fresh)
}

// Subscribe returns a channel that receives the view each time it
// changes, the current one first once there is one; a reader slower than
// the changes gets the latest, its Changed listing every shard changed
// since the Table it took before. It is closed when ctx ends.
func (c *Client) Subscribe(ctx context.Context) <-chan Table { return subscribe(ctx, c, c.take) }

// Changes returns a channel that receives, each time the view changes,
// the shards whose route changed (or went) since the last receive: every
// shard the view has first, once there is a view; Leader gives each one's
// route now. A reader slower than the changes gets them merged. Unlike
// Subscribe it copies no routes, so a change costs in proportion to the
// shards it changed (a Table of 100,000 routes takes milliseconds to
// copy). It is closed when ctx ends.
func (c *Client) Changes(ctx context.Context) <-chan []string { return subscribe(ctx, c, c.takeShards) }

// subscribe registers a subscriber and returns the channel its goroutine
// feeds with take's value at each change, until ctx ends (closed then).
func subscribe[T any](ctx context.Context, c *Client, take func(*subscriber) T) <-chan T {
	sub := &subscriber{wake: make(chan struct{}, 1), first: true, changed: map[string]bool{}}
	c.mu.Lock()
	c.waiters[sub] = struct{}{}
	if c.ready {
		sub.wake <- struct{}{}
	}
	c.mu.Unlock()
	out := make(chan T)
	go func() {
		defer close(out)
		defer func() {
			c.mu.Lock()
			delete(c.waiters, sub)
			c.mu.Unlock()
		}()
		for {
			select {
			case <-sub.wake:
			case <-ctx.Done():
				return
			}
			select {
			case out <- take(sub):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// takeShards returns the shards changed for sub since its last take
// (every shard in the view at its first).
func (c *Client) takeShards(sub *subscriber) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	if sub.first {
		out = slices.Collect(maps.Keys(c.routes))
	} else {
		out = slices.Collect(maps.Keys(sub.changed))
	}
	sub.first = false
	clear(sub.changed)
	return out
}

// take returns the view for sub, with what changed since its last.
func (c *Client) take(sub *subscriber) Table {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tableLocked()
	if !sub.first {
		t.Changed = slices.Collect(maps.Keys(sub.changed))
	}
	sub.first = false
	clear(sub.changed)
	return t
}
