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
// Keys map to shards with HashKey unless Config.ShardOf is given:
// FNV-1a (64 bits) of the key's bytes, then Lamping and Veach's jump
// consistent hash onto the shards in the order Config.Shards lists them.
// Both are fixed: a key maps to the same shard in every release and
// process given the same list, and appending shards to the list moves
// only the keys the new shards take.
//
// Sources. ZooKeeper follows the root with partition.WatchCluster: one
// persistent recursive watch on the root (ZooKeeper 3.6+), leaders from
// the elections, each change seen one notification and two reads after
// the election. Daemons follows the daemons' /v1/watch streams (each
// daemon's view comes the same way), one daemon at a time, asking a
// heartbeat; a daemon silent for three heartbeats (paused, cut off, gone)
// is left for the next one in the list, whose snapshot replaces the view.
//
// Staleness. The view is only as current as its source's last word:
// with ZooKeeper, the moment the session was last seen connected
// (checked every staleTick); with daemons, the last line of the stream
// (events or heartbeats). Client.Staleness reports it; once it passes
// Config.StaleAfter (default DefaultStaleAfter), Route and Leader fail with
// ErrStale and the route they would have given, for the caller to decide.
// While fresh, a route lags its election by the source's notification
// and reads, never by a member's record: no record is a source of leaders,
// and a member's record claiming shards it does not lead routes nothing
// to it.
//
// A route is advice: the leader may change as a request travels. The
// fencing token (Route.Token, checked by a zxidfence guard at the
// resource) is what keeps a request routed to a former leader from acting.
package routing
