// Package zkelecthttp mounts, on a program's own http.ServeMux, the HTTP
// surface the zkelect daemon serves: /healthz, /readyz, /v1/leaderships,
// /v1/owners and /v1/watch. The daemon (cmd/zkelect) is built on it, so a
// library user's endpoints and the daemon's follow the same rules and
// serve the same JSON.
//
// Shards serves a partition member (a partition.Manager on a
// recipe.Session); Elections serves a recipe Session and its Candidates,
// for programs without partition. Both are read-only: changes go through
// ZooKeeper (package partition/operator), protected by its ACLs.
//
// # Owners and watch
//
// /v1/owners and /v1/watch show each shard's leader as its election holds
// it (partition.WatchCluster: one persistent recursive watch on the root,
// ZooKeeper 3.6+), with the member's address and labels from its record:
// a record written by a non-member, or lagging its member, never shows a
// shard led by its writer. An idle /v1/watch stream gets a comment line
// every ?heartbeat= (100ms to 15s, 15s by default), by which a client
// (partition/routing's Daemons source) tells a live daemon from a paused
// one, only while the daemon's picture is in sync (partition.ClusterSync:
// its session connected and, after a reconnect, the root read again), the
// rule by which the routing client's ZooKeeper source vouches for its
// own view; a new stream is refused with 503 meanwhile.
//
// # Health
//
// /healthz answers 503, with the reason, when a restart would help, as
// client-go's leaderelection HealthzAdaptor does for a leader that stopped
// renewing: the session has had no answer from ZooKeeper's quorum leader
// for a whole session timeout (its lease ran out), or it expired and no new
// one replaced it yet (SessionHealth). Further rules are Checks: the daemon
// adds "a shard's child still runs past its grace after its leadership
// ended".
//
// # Readiness
//
// A partition member is ready (/readyz 200) while it is registered under
// <root>/members by this session and not draining, once it first leads
// exactly its share of the shards. Shards.Run evaluates it every
// ReadinessInterval too (one read of the member's znode), so that
// ShardsOptions.OnReadiness follows the member whether or not anything
// probes /readyz. A recipe process is ready while healthy and connected.
//
// # Limits
//
// At most ShardsOptions.MaxWatchStreams (DefaultMaxWatchStreams, 100)
// /v1/watch streams are open at once; beyond it a client gets 503 with the
// reason and a Retry-After. NewServer gives an http.Server the daemon's
// header and idle timeouts.
package zkelecthttp
