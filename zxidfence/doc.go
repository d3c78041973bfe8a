// Package zxidfence makes a paused or partitioned ex-leader harmless: the
// protected resource, not the leader, decides whether a write may land.
//
// A leader's belief that it leads is advice. A process can stop for longer
// than its ZooKeeper session timeout (a GC pause, SIGSTOP, a stalled VM),
// lose its leadership while it is stopped, and then carry on with a write it
// had already decided on. Locks and leases cannot prevent that; fencing
// tokens can (Martin Kleppmann, "How to do distributed locking", 2016,
// https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html):
// every leader gets a token larger than any earlier leader's, sends it with
// every write, and the resource refuses a token lower than the highest it has
// already accepted.
//
// Here the token is a ZooKeeper zxid (Token): the czxid of the leader's
// election znode. Creation order is zxid order, so each later leader of an
// election holds a strictly larger token, across session expiry and
// re-election. Services that receive writes need only this package, not the
// election code.
//
// # Guards
//
// Each guard remembers, per resource key, the highest Fence it accepted, and
// admits or refuses a write atomically with it. Equal fences are admitted
// (one leader writes many times); lower ones are refused with a
// *StaleTokenError naming both fences (errors.Is(err, ErrStaleToken)); the
// zero token never passes (ErrNoToken). Keys are independent: shard A's
// token carries no authority over shard B.
//
//   - Memory: in-process, one lock per key; for resources in the same process
//     and a bounded set of keys (each key it sees is kept; see WithMaxKeys).
//   - SQL: database/sql, PostgreSQL or SQLite. The write is one conditional
//     upsert (zero rows means stale), or a transaction in which the caller's
//     own statements run after the fenced row update, holding its lock.
//   - ZooKeeper: a znode written in one multi that also checks the writer's
//     election znode, so a deposed leader's write fails inside ZooKeeper; the
//     fence is recorded in the znode's header (see AppendZnodeData).
//   - HTTP: Transport sends the fence in the Fencing-Token (and
//     Fencing-Generation) header; Middleware admits requests through a Guard
//     and answers 409 Conflict naming both fences, or 400 for a missing or
//     malformed header.
//
// No guard lowers its fence, and the SQL and ZooKeeper guards keep theirs
// across restarts.
//
// # A rebuilt ensemble
//
// A ZooKeeper ensemble wiped and redeployed restarts its zxids low, and every
// guard would (correctly) refuse its leaders forever. The way through is
// explicit: a Fence carries a Generation beside the token, compared first.
// Operators configure the writers with the next generation and admit it at
// each resource with the guard's AcceptGeneration(ctx, key, gen, reason),
// which is logged at warn level with its reason and counted in
// zkelect_fence_generation_changes_total; the command
// `zkelect fence accept-generation` does it for a ZooKeeper target or a SQL
// guard's row. Until then writes of the new
// generation are refused with ErrUnknownGeneration; after it, writers of the
// old generation are stale. A guard never resets by itself.
//
// zkelect's session recovers a wiped ensemble by itself only when every
// configured server answers that the session is gone; its next session
// then starts from zxid 0, so its leaders' tokens are low, and every
// guard refuses them (ErrStaleToken) until the operator moves the
// resources to the next generation and the writers present it
// (LeaderOf(lead, gen), Fence{Generation: gen, Token: t}). The session
// counts the wipes it recovered from (internal/zkconn's Conn.Generation),
// but the generation a guard compares is the operator's: it is never
// raised for them, so a wipe can never admit itself.
//
// What a guard can know of another ensemble. A token is a zxid, and the
// zxids of two ensembles overlap: from the number alone the memory, SQL
// and HTTP guards cannot tell a token of another ensemble from one of
// theirs; they refuse it only when it is lower than the highest they
// accepted, and they rely on the session never leading on another
// ensemble (it refuses a server that does not hold the znodes the
// process saw on its ensemble) and on generations. The ZooKeeper guard can
// know: its multi checks the writer's election znode on the guard's own
// ensemble, where another ensemble's leader has no znode, so that
// leader's write fails with ErrNotLeader whatever its token.
//
// # Metrics
//
// NewMetrics registers accepted and rejected counters per guard kind (and per
// resource for a bounded set the caller names) on a caller-given
// prometheus.Registerer. The highest token is exported as its epoch and
// counter, never as one float sample: float64 is exact only to 2^53.
package zxidfence
