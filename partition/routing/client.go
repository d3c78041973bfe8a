package routing

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

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
}

// Source gives a Client its tables: ZooKeeper or Daemons.
type Source interface {
	// run calls set with each new table and fresh each time the source
	// confirms its view (an event, a heartbeat, a connected session), until
	// ctx ends (nil) or the source fails for good.
	run(ctx context.Context, set func(Table), fresh func()) error
	// check reports an invalid source, for New.
	check() error
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
}

// Client is a router's view of a root. Its methods are safe for
// concurrent use; Run feeds it.
type Client struct {
	cfg Config

	mu      sync.Mutex
	table   Table
	ready   bool
	fresh   time.Time           // when the source last confirmed the view
	waiters map[chan Table]bool // Subscribe's channels
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
	return &Client{cfg: cfg, waiters: map[chan Table]bool{}}, nil
}

// Run follows the source until ctx ends (nil) or the source fails for
// good (its error: a closed session, no daemon given). Call it once.
func (c *Client) Run(ctx context.Context) error {
	err := c.cfg.Source.run(ctx, c.set, c.confirm)
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("routing: %w", err)
}

// set takes a new table from the source.
func (c *Client) set(t Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table, c.ready, c.fresh = t, true, time.Now()
	for ch := range c.waiters {
		select { // latest wins: drop the one not taken yet
		case <-ch:
		default:
		}
		ch <- t
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
	if !c.ready {
		return Route{Shard: shard}, ErrNotReady
	}
	r, ok := c.table.Routes[shard]
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
	return c.table
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
// the changes gets the latest. It is closed when ctx ends.
func (c *Client) Subscribe(ctx context.Context) <-chan Table {
	ch := make(chan Table, 1)
	c.mu.Lock()
	c.waiters[ch] = true
	if c.ready {
		ch <- c.table
	}
	c.mu.Unlock()
	out := make(chan Table)
	go func() {
		defer close(out)
		defer func() {
			c.mu.Lock()
			delete(c.waiters, ch)
			c.mu.Unlock()
		}()
		for {
			select {
			case t := <-ch:
				select {
				case out <- t:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// tableOf builds a table, cloning nothing it does not own.
func tableOf(routes map[string]Route) Table { return Table{Routes: maps.Clone(routes)} }
