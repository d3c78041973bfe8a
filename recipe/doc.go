// Package recipe implements ZooKeeper's leader-election recipe: ephemeral
// sequential znodes under an election path, the lowest sequence leads, every
// other candidate watches only its immediate predecessor.
//
// A Session is one ZooKeeper session shared by any number of candidates. A
// Candidate takes part in one election; Campaign blocks until it leads and
// returns a Leadership, whose Context is cancelled the moment leadership
// ends and whose Err says why (ErrResigned, ErrClosed, ErrSessionExpired,
// ErrSuspended, ErrZnodeDeleted). Run campaigns, runs a function while
// leading, and campaigns again.
//
// # What is guaranteed
//
//   - At most one candidate of an election believes it leads while its
//     session is alive and connected: a candidate leads only on the lowest
//     znode, and only after checking that the znode's ephemeralOwner is its
//     current session.
//   - Every Leadership carries a fencing token, the czxid of the leader's
//     znode (zxidfence.Token). Each later leadership of the same election
//     path holds a strictly larger token, across resigns, crashes, session
//     expiry, ensemble leader changes and re-elections of the same process.
//     A resource that remembers the highest token it accepted and rejects
//     lower ones (package zxidfence) is safe even against a leader that was
//     paused and resumes after another was elected.
//   - Belief is not the same as truth: a leader cut off from ZooKeeper
//     cannot learn at once that its session expired. The recipe bounds that
//     window with a local lease on the monotonic clock, renewed only by
//     answers that prove the quorum leader (the server that expires
//     sessions) heard of the session, whichever server the client is on:
//     the session cannot expire before (send time of the connect request
//     the server answered, or of a sync whose answer arrived at least an
//     eighth of the session timeout before a later answered sync was sent
//     on the same connection: a gap proven at the server, which a stalled
//     link delivering both syncs together cannot fake) + negotiated
//     session timeout T, for the session that earned it only (a new
//     session's handshake never renews the old one's lease). Pings and
//     reads a follower answers do not renew it: a follower cut off from
//     the quorum leader answers them for syncLimit ticks while the leader
//     expires the session. The session sends one sync every T/6 for the
//     lease; with a round trip r ≤ T/24 the lease has T − margin − T/3 −
//     r left just before each renewal (5T/12 − r on the default margin),
//     and T − margin − T/2 − r up to r ≤ 5T/24.
//     Leadership ends at that instant minus a
//     margin (a quarter of the session timeout by default, the
//     TolerateSuspend margin otherwise), and, by default, at the first sign
//     of a lost connection (ErrSuspended). A process paused longer than the
//     lease sees its leadership's context cancelled as soon as it resumes,
//     but code already running may still act: only fencing stops that.
//   - A connection loss under the default policy ends leadership; if the
//     session survives and the znode still leads, the candidate leads again
//     with the same token. After session expiry a candidate still in the
//     election re-enters with a new znode (and a larger token).
//   - Candidates never leave znodes behind: a create whose reply was lost is
//     resolved by the candidate's GUID in the znode name (protected mode)
//     and the znode's owner; duplicates are deleted; deletes are retried
//     until they succeed or the session is gone; Close deletes the znode in
//     every state with its own deadline and stops every goroutine.
//
// # Campaigning
//
// A candidate enters the election at its first Campaign and stays in it
// until Resign, Close, or a Campaign whose context ends while it waits.
// While in the election it keeps a znode: after session expiry or the
// deletion of its znode it creates a new one. A leadership won while no
// Campaign is waiting (for example between Run's terms) is returned by the
// next Campaign; its Context may already be cancelled if it ended since.
// A candidate's znode is created with create2 (ZooKeeper 3.5+), whose reply
// carries the znode's owner and czxid, and the election is listed right
// behind it without waiting: a candidate alone in an election leads after
// two round trips. A candidate of an election that does not exist yet
// (WithNewElection) creates the election's znode in the transaction of
// its own: its znode is then the parent's first child, nothing can sort
// before it, and it leads after one round trip, reading its own znode
// (with the watch a leader keeps) instead of listing.
//
// # Connection loss
//
// By default (EndOnSuspend) leadership ends the moment the connection is
// lost, since the session may expire while cut off and another candidate
// lead. TolerateSuspend keeps leading through short losses, up to the local
// lease deadline described above: fewer leadership changes on a flaky
// network, against a bounded window in which the leader acts without
// knowing whether its session still exists. A server that expires the
// session while the client is cut off tells the client only when it
// reconnects; under EndOnSuspend the leadership has ended (ErrSuspended)
// long before, under TolerateSuspend the lease has, unless the reconnect
// came first (then ErrSessionExpired). Suspension legitimately comes first
// there: the session was alive when the leadership ended. A process paused
// (or starved) past the session timeout is different: on resuming, its
// lease has run out by more than the margin, and ZooKeeper may already have
// expired the session and deleted its znodes (their deletion events are
// often the first thing read). Such a leadership ends at once, with its
// reason open: Leadership.Reason waits until the candidate learns the
// session's fate and returns ErrSessionExpired if it expired (ErrSuspended
// if it lived on). The partition manager waits for it before calling
// OnStoppedLeading.
//
// # Request deadline
//
// A server that keeps answering pings while it answers no request (a
// stuck request pipeline) would keep every campaign and read of the
// session waiting while Connected stays true. The Session therefore closes
// the connection in use when a request has been in flight on it and no
// request has been answered for longer than the negotiated session
// timeout, logging a warning that names the server and the age of the
// oldest request; the session reconnects to the next server and lives on,
// and candidates and observers re-read as after any connection loss.
// ZooKeeper's Java client offers the like since 3.6 as the client property
// zookeeper.request.timeout (ZOOKEEPER-2251), off by default.
//
// # ZooKeeper operations and errors
//
// Besides elections, a Session offers ZooKeeper's operations (Get,
// Children, Exists, Create, Delete, Set, Multi, Sync, and the watched
// GetW, ChildrenW, ExistsW), each bounded by its context: a call whose
// context ends holds nothing. Every ZooKeeper error code has one meaning:
// Retryable reports the transient ones (connection loss, a throttled
// request, session moved, not read-only, reconfiguration in progress),
// which never end a candidate's campaign or Run; expiry and failed
// authentication end the session; the rest (no node, node exists, bad
// version, no auth, ...) are the caller's. A reconnecting session presents
// the newest zxid it has read, so no server behind that view accepts it:
// a session never reads an older view than one it saw. Session.Conn is an
// escape hatch to the underlying go-zookeeper connection, for tools.
//
// # Interoperability
//
// With the default naming (CuratorNaming) znodes are named like Apache
// Curator's LeaderLatch, "_c_<guid>-latch-<seq>", and data holds the
// participant id, so Go candidates and Curator participants share an
// election. KazooNaming matches the Python client kazoo. Order is by the
// sequence suffix, safe across the counter's 32-bit wrap.
package recipe
