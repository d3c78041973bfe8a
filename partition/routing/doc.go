// Package routing is a router's view of a partition root (the role of
// Helix's spectator): key to shard, shard to the member leading it, with
// the member's address, labels and fencing token, kept current from the
// elections themselves and a subscription to its changes.
//
//	c, err := routing.New(routing.Config{
//	    Source: routing.ZooKeeper(sess, "/apps/billing"), // or routing.Daemons(urls, 0)
//	    Shards: partition.Range(0, 64),                   // the members' Config.Shards
//	})
//	go c.Run(ctx)
//	r, err := c.Route(key) // r.Address, r.Token; ErrNoLeader, ErrStale, ErrNotReady
//
// A router that would rather wait for a leader than fail a request (as
// Helix spectators and Kafka clients retry on NotLeader) asks WaitRoute
// or WaitLeader with a bounded ctx: they return once the view shows the
// shard's leader. A shard is without a leader in the view in the gap of
// an election: after a handoff's resignation until the next leader's
// candidate is first (a few notification round trips), or after its
// leader crashed until that member's session expires and another wins
// (up to the members' session timeout plus the election). The router's
// own view lags each election by a notification, at times plus a
// batched read (p99 under 100 ms at 10,000 shards on a loaded 2-core
// machine), so a bound of a few hundred milliseconds rides out a handoff
// and the view's lag; only a bound past the session timeout rides out a
// crash. In the routing benchmark (bench/README.md) every request that
// found no leader in view at 10,000 shards was in a crashed or stopped
// member's gap, none behind the view's lag.
//
// Keys map to shards with HashKey unless Config.ShardOf is given:
// FNV-1a (64 bits) of the key's bytes, then Lamping and Veach's jump
// consistent hash onto the shards in the order Config.Shards lists them.
// Both are fixed: a key maps to the same shard in every release and
// process given the same list, and appending shards to the list moves
// only the keys the new shards take.
//
// Sources. ZooKeeper follows the root's elections itself: one
// persistent recursive watch on the root (ZooKeeper 3.6+), leaders from
// the elections (partition/internal/root/electview: a leader's deletion
// shows its successor at once, a created candidate is read in a batched
// multiRead), addresses and labels from the members' records; each step
// updates only the routes whose leader changed. Daemons follows the
// daemons' /v1/watch streams (each daemon's view comes the same way, over
// partition.WatchCluster), one daemon at a time, asking a heartbeat; a
// daemon silent for three heartbeats (paused, cut off, gone) is left for
// the next one in the list, whose snapshot replaces the view.
//
// Staleness. The view is only as current as its source's last word:
// with ZooKeeper, the last moment (checked every staleTick) its session
// was connected and its view in sync: right after a reconnect it is not,
// until the watch is added again and the root listed and read again (a
// change made while the watch was away is known only then), so a
// router cut off for longer than Config.StaleAfter is stale until that
// read settles, not from the moment its session reconnects; with
// daemons, the last line of the stream (events or heartbeats).
// Client.Staleness reports it; once it passes Config.StaleAfter (default
// DefaultStaleAfter), Route and Leader fail with ErrStale and the route
// they would have given, for the caller to decide. While fresh, a route
// lags its election by the source's notification and reads, never by a
// member's record: no record is a source of leaders, and a member's
// record claiming shards it does not lead routes nothing to it.
//
// Lag and cost, measured (zkelect-dev bench --scenarios routing, see
// bench/README.md): at 64 and 10,000 shards a router over ZooKeeper shows
// a new leader at p50 0-1.4 ms after its own OnStartedLeading and p99
// under 30 ms in every event class (drain, undrain, move, crash, restart
// within grace, resume after expiry) on a 2-core machine at load 14-23. Config.Metrics
// exports zkelect_routing_view_lag_seconds (ZooKeeper source): from the
// notification reaching the router to its view showing the change. The
// ensemble holds one watch per router for the elections (plus one data
// watch per member record and the operator znode, as every
// WatchCluster); each leader change costs the router's connection about
// two notifications (the new candidate's creation, the old leader's
// deletion; about 120 bytes each at 10,000 shards, less with shorter
// roots), a member's record write one more, and the reads of created
// candidates go 128 to a request; a router's start or reconnect reads the
// root whole (a request per 128 elections and per 128 candidates).
//
// A route is advice: the leader may change as a request travels. The
// fencing token (Route.Token, checked by a zxidfence guard at the
// resource) is what keeps a request routed to a former leader from acting.
package routing
