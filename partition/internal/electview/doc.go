// Package electview follows who leads every shard of a partition root as
// the elections themselves say, at the speed of ZooKeeper's notifications,
// for observers that do not take part: partition's WatchLeaders and
// WatchCluster, the operator's waits, zkelecthttp's /v1/owners and
// /v1/watch, and the routing client.
//
// One persistent recursive watch (ZooKeeper 3.6+ addWatch) on the root
// tells it of every candidate znode created or deleted in any shard's
// election (<root>/buckets/<bucket>/<shard>/<candidate>, or
// <root>/shards/<shard>/<candidate> in a flat root). It re-reads only the
// elections whose first znode may have changed: the deletion of the
// leader's znode, or a creation ordered before it (never a standby
// joining or leaving behind the leader). A re-read is one getChildren and
// one getData of the first znode: the leader is that znode's data (the
// member id its candidate gave as participant id), its token the znode's
// czxid. A shard is shown led only by a candidate's ephemeral znode; a
// persistent znode first in line leads nothing.
//
// So the view lags an election by one notification and two round trips,
// whatever the member's record says: a record is never the source of a
// leader here, and a record written by a non-member claiming shards shows
// nothing. After a reconnect (the server forgets watches with the
// connection) the watch is added again and every election re-read, the
// leaders last read shown meanwhile.
//
// Cost to the ensemble: one watch per observer session, one notification
// per change under the root (candidates created and deleted, member
// records written, members joining and leaving), and two reads per
// election whose leader may have changed; a start or a reconnect lists
// every bucket and reads every election once.
package electview
