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
// election whole once (its candidates: one getChildren, one getData
// each), then keeps each election's candidates from the notifications: a
// created candidate is read once (one getData: the member id its
// candidate gave as participant id, and its czxid, the token), off the
// critical path; a deleted one is removed. The first candidate in line is
// the leader, so when a leader's znode is deleted its successor, already
// read, is shown at once (candidates.go). A shard is shown led only by a
// candidate's ephemeral znode; a persistent znode first in line leads
// nothing.
//
// So the view lags an election by one notification (by a read more when
// the new leader's candidate was created just before it won, as a
// handoff's target's is), whatever the member's record says: a record is
// never the source of a leader here, and a record written by a non-member
// claiming shards shows nothing. After a reconnect (the server forgets
// watches with the connection) the watch is added again and every
// election read whole again, the leaders last read shown meanwhile.
//
// Cost to the ensemble: one watch per observer session, one notification
// per change under the root (candidates created and deleted, member
// records written, members joining and leaving), one getData per
// candidate created; a start or a reconnect lists every bucket and reads
// every election whole (a getChildren and a getData per candidate).
package electview
