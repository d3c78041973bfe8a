// Package electview follows who leads every shard of a partition root as
// the elections themselves say, at the speed of ZooKeeper's notifications,
// for observers that do not take part: partition's WatchLeaders and
// WatchCluster, the operator's waits, zkelecthttp's /v1/owners and
// /v1/watch, and the routing client.
//
// One persistent recursive watch (ZooKeeper 3.6+ addWatch) on the root
// tells it of every candidate znode created or deleted in any shard's
// election (<root>/buckets/<bucket>/<shard>/<candidate>, or
// <root>/shards/<shard>/<candidate> in a flat root). It reads every
// election whole once, then keeps each election's candidates from the
// notifications: a created candidate is read once (its data, the member
// id its candidate gave as participant id, and its czxid, the token), off
// the critical path unless it is first in line; a deleted one is removed.
// The first candidate in line is the leader, so when a leader's znode is
// deleted its successor, already read, is shown at once (candidates.go).
// A shard is shown led only by a candidate's ephemeral znode; a
// persistent znode first in line leads nothing.
//
// Reads go in batches (ZooKeeper 3.6+ multiRead, recipe.Session.GetMany
// and ChildrenMany): up to 128 created candidates a request, those first
// in line (a shard shown without a leader until read) before the others;
// a whole read lists up to 128 elections with one request and reads their
// candidates 128 a request (wholeread.go). The requests in flight follow
// the answers (window.go: 2 to 32, growing while answers come within a
// sixteenth of the session timeout, halving when one takes an eighth), so
// a drain's thousands of created candidates are read in tens of requests
// without lengthening the server's line for the members' lease syncs.
//
// So the view lags an election by one notification (by a batched read
// more when the new leader's candidate was created just before it won,
// as a crash's takeover's and a handoff's target's may be), whatever the
// member's record says: a record is never the source of a leader here,
// and a record written by a non-member claiming shards shows nothing.
// After a reconnect (the server forgets watches with the connection) the
// watch is added again and every election read whole again, the leaders
// last read shown meanwhile; Synced says when the view is in sync again,
// for a follower that vouches for its view (the routing client).
// Followers that keep their own picture take what changed
// (TakeChanged, Leader) instead of Leaders whole, and the lag of each
// change behind its notification (TakeNoticed).
//
// Cost to the ensemble: one watch per observer session, one notification
// per change under the root (candidates created and deleted, member
// records written, members joining and leaving; about 120 bytes each at
// 10,000 shards), one multiRead per batch of created candidates; a start
// or a reconnect lists every bucket and reads every election whole (a
// multiRead per 128 elections, one per 128 candidates). Measured in
// bench/README.md (routing).
package electview
