// Package partition runs one leader election per shard for a group of
// members sharing a ZooKeeper root, keeps the shards' leaderships balanced
// across the live members, moves few of them when members come and go, and
// hands them over gracefully.
//
// # Layout
//
//	<root>/members/<member>   ephemeral: the member is live (its session owns it)
//	<root>/owners/<member>    persistent: the member's record, JSON {session, leading, reserved,
//	                          shard_set, address, labels, weight, unavailable}; later fields optional
//	<root>/buckets            persistent: the shard layout, JSON {"layout":"buckets","buckets":1024}; absent: flat
//	<root>/buckets/<bucket>/<shard>  one recipe election per shard (recipe.ShortNaming; Curator LeaderLatch naming before, both order together);
//	                          bucket: FNV-1a of the shard id modulo the bucket count, in fixed-width hex ("3f2")
//	<root>/shards/<shard>     the same in a flat root, made by a release before buckets (empty in a bucketed root)
//	<root>/operator           persistent, optional: the operator state (operator.State JSON)
//
// A member's elections run on the recipe.Session given to NewManager and,
// above Config.MaxShardsPerSession elections (default 5,000), on sibling
// sessions it opens itself (recipe.Session.Sibling), so that no session
// owns more ephemeral znodes than ZooKeeper can list in the closeSession
// transaction that ends it (see MaxShardsPerSession and ZOOKEEPER-4306).
// They are one member: one id, one member znode and record (on the first
// session), one set of callbacks and metrics. Requests for many shards are
// in flight together on each session (Config.MaxInFlight). A shard list
// one of whose listings would exceed jute.maxbuffer is refused
// (Config.JuteMaxBuffer), with the arithmetic in the error.
//
// # Buckets and older releases
//
// A root this release creates spreads its elections over 1,024 bucket
// znodes under <root>/buckets, made with <root>/shards in one
// transaction, so that no listing
// holds the whole shard list: it holds 1,000,000 ids of 32 bytes with its
// fullest bucket listing in 38 KB (see the bucket arithmetic in
// partition/internal/root). A root an older release created has no
// <root>/buckets and is read and run flat by this release,
// so old and new members share its elections during a rolling upgrade;
// once every member runs this release, operator.MigrateToBuckets moves it
// to buckets while they run, a shard at a time, each handed by its leader
// from its flat election to its bucketed one (OnStoppedLeading with
// ErrMovedToBuckets, then a leadership with a larger token), never two
// leaders at once. An older release does not read the
// layout and campaigns in <root>/shards/<shard>, an election beside the
// bucketed one, so a bucketed root's <root>/shards grants only READ: an
// older release's member fails at Run with recipe.ErrACLDenied under a
// secured Config.ACL, and under the world ACL has every campaign refused
// (retried about once a second a shard: stop it) and leads nothing; members of this release,
// whose records advertise buckets, deal it no shard. Roll a fleet forward
// on its existing root, and create new roots only with this release.
//
// # Guarantees
//
// Safety never depends on the assignment: at most one member leads a shard
// at a time because each shard is a recipe election, and every leadership's
// fencing token (the czxid of its znode) is larger than every earlier one of
// that shard. Pass the token passed to OnStartedLeading to a zxidfence guard
// on every write; a deposed leader's writes are then rejected even if it
// has not noticed yet.
//
// Liveness: while any member is live every shard gets a leader. A crashed
// member's shards are led by others once its session expires (the session
// timeout) plus a few round trips; a member that stops gracefully
// (Run's ctx cancelled) unregisters first and resigns every shard, so the
// others take over within about the handoff time, without waiting for a
// session timeout.
//
// Balance and movement: in steady state no member leads more than
// ceil(S·wᵢ/Σw) of S shards, wᵢ its weight (Config.Weight, 1 by default:
// ceil(shards / live members)). A member joining takes about its share and
// nobody else moves; a member leaving moves only its own shards; a weight
// change moves only what the new shares need. See package partition/assign
// for the rule (assign.Assign); its golden vectors (assign.Format) keep it
// the same across releases.
//
// Operator state: package partition/operator (and `zkelect shards
// drain|freeze|move|unmove|pin|weight`) writes <root>/operator, which every
// member follows and feeds into its assignment: a drained member keeps
// running and hands every shard away gracefully; a freeze stops balancing
// moves while shards of a member that left are still taken over; a move
// hands one shard over once, and expires if its target leaves or is
// drained first; a pin keeps a shard on a member while it is live, and
// clears a move of it; a weight overrides the member's own. The package
// doc of partition/operator gives the outcome of every combination.
//
// Handoff: a leadership moved for balance is handed over: its ctx is
// cancelled, OnStartedLeading gets up to Config.HandoffTimeout to return,
// OnStoppedLeading is called, and only then is the znode deleted, so the
// next leader's OnStartedLeading never overlaps it (demote before promote).
// At most Config.MaxConcurrentHandoffs balancing handoffs run at once per
// member; taking over shards whose leader died is never throttled. A
// candidate that wins a shard assigned elsewhere resigns before any callback
// runs; one that wins just as the shard is moved elsewhere, after its
// callback started, ends like a handoff, with ErrWithdrawn, once the new
// target's candidate waits (or, if none comes within HandoffTimeout, goes
// on, and is handed off with ErrHandoff).
//
// Restart grace: the shards of a member that left stay reserved for it for
// Config.RestartGrace. They are led meanwhile by the members the balance
// deals them to, as if they had no holder, without moving anybody else's
// shards; if it registers again within the grace it gets them back, and
// nobody else's shards move. The same holds for a member whose session
// expired: it re-enters every election with new znodes and gets its shards
// back. The grace is measured from when the other members noticed it leave
// (their own clocks); after it, they delete its record, and nothing moves:
// the members leading its shards meanwhile keep them. So a leave moves each
// of the leaver's shards once. A member whose session was lost counts its
// own grace from that session's lease (the instant before which ZooKeeper
// cannot have expired it, recipe.Session.LeaseDeadlineOf), which is no
// later than the others' count: cut off for longer than its session and
// grace, it comes back reserving nothing. Each reservation has its own
// deadline.
//
// Observing leaders: Config.OnLeaderChanged (in a member) and
// WatchLeaders (in any process, without registering) report each shard's
// leader and token as the members' records publish it, for routing
// requests. They lag the elections by a record write plus at most the
// publish interval after the member's previous write (50 ms; for a record
// above 64 KiB, ten times the slowest recent write when writes are slow,
// at most 1 s); the fencing token, not this report, keeps writes safe. The
// lag is measured by zkelect_partition_record_publish_lag_seconds, failed
// record writes (retried until written) by
// zkelect_partition_record_write_failures_total.
//
// Session expiry: every election on the expired session re-enters with a
// new znode (a new, larger token) on its replacement; OnStoppedLeading
// reports recipe.ErrSessionExpired and OnStartedLeading is called again
// when the shard is led again. The member's other sessions, and their
// leaderships, are not affected; the shards of the expired one stay
// reserved for the member for its restart grace.
//
// A sibling session down: once a sibling session has not been connected
// for about a session timeout (half a timeout after its lease ran out),
// the member publishes the shards whose elections sit on it as unavailable
// (its record's "unavailable" list) and stops claiming or reserving them;
// every member's assignment deals them to another member, and the member
// places new elections on its other sessions. When the session is up
// again (a new one, after an expiry) the list goes and the balance deals
// the shards as before. A sibling that cannot be opened (refused, or not
// connected within two session timeouts) makes the elections that needed
// it unavailable the same way, for four session timeouts, after which the
// member tries again; a shard led elsewhere meanwhile comes back only once
// a candidate of this member waits in its election. Members of earlier releases ignore the list. A
// member whose primary session is down leaves as a whole.
//
// # Design choices
//
// No coordinator: every member computes the assignment from the same
// observed znodes (the live members and their records) with the pure
// function Assign, so there is no coordinator to elect, fail over or fence,
// and no assignment znode that would outgrow ZooKeeper's 1 MB limit at tens
// of thousands of shards. While the state changes members can disagree for
// a moment; that costs at most a shard led by a member that passes it on,
// never two leaders (the election decides that), and every member agrees
// again as soon as the znodes stop changing.
//
// Candidates only where assigned: a member campaigns only for the shards
// assigned to it, not as a standby on every shard. Standbys everywhere would
// cost shards x members znodes, watches and goroutines, and multiply the
// cold-start work by the number of members; failover instead waits for the
// member list to change (one watch) and then campaigns for the orphans with
// many requests in flight. Each campaigning shard costs one recipe
// Candidate, whose event loop runs on a goroutine only while it has mail,
// and one runner, whose goroutine parks while the shard is led; the
// member's candidates share multi transactions for their creates. While a
// shard is led, OnStartedLeading runs on a goroutine of its own until it
// returns.
//
// A leadership suspended by a lost connection (every member at once when
// the ensemble's quorum leader fails) stays in its member's record while
// its candidate's znode stays first, for at most a session timeout: the
// member leads it again with the same token once the session answers, and
// a record that dropped it meanwhile would deal it to another member and
// move it twice for a failover every session survived.
//
// Records lag behind leaderships by up to a write, so members act on an
// assignment only once it has held for a short settle delay before handing
// a shard off (a drained member's shards go at once: every assignment
// deals them elsewhere), and when two records claim a shard the larger
// token (the later leader) wins. A member keeps its assignment from what
// changed (assign.Assigner, fed the holders its view's updates changed):
// a step costs the changed records and its own share, not the whole list.
// It recomputes the assignment at most once per step gap for records' changes (ten times its recent
// steps' cost, 20 ms to 5 s; while its steps change nothing the gap
// doubles with each, to at most eight times that), a step a timer or a
// runner waits for after that cost's gap, and within 20 ms of an
// operator's change or (after the startup wait) a change of the live
// members. Starting elections is paced by Config.MaxInFlight and
// the shards' election znodes are created up front, hundreds per multi.
//
// A leadership is handed off only to a member whose candidate waits in the
// shard's election: a handoff asked before the successor's candidate
// arrives waits for it on a child watch of the election (a joiner starts
// thousands of elections one after another), at most HandoffTimeout;
// otherwise the handoff is deferred and the shard stays led. Orphaned shards assigned to a member that is registered but
// does not campaign (its process wedged while its session lives) stay
// without a leader until its session ends.
//
// A member id must be unique among live members: Run refuses a member id
// whose znode another live session owns, or another Manager on the same
// session registered (ErrDuplicateMember), so two processes (or two
// Managers) configured alike never both act as one member. A member
// restarted right after a crash finds its previous run's znode still
// there, owned by a session ZooKeeper has not expired yet: Run waits for
// it to go (up to one and a half session timeouts, logging what it waits
// for) before it registers or refuses. A znode owned by a session this
// process held before (recipe.Session.HeldBefore: the servers keep it a
// while after the Session moved on) is the member's own at once: it is
// deleted and registered again. A refused member leaves the live one's record alone, and a member writes its record
// only over the version it last wrote or read unless it holds its member
// id, so a stale process with the same id cannot overwrite a newer record.
//
// Foreign znodes are left alone: a persistent child of <root>/members is
// not a member (it is logged once); a persistent znode in a shard's
// election keeps that shard unled until someone deletes it (the candidate
// behind it logs a warning; Owners reports it as Owner.Stuck).
//
// How it is built: the member's decisions (the assignment and its
// targets, the restart grace, what it claims in its record, step pacing,
// the startup wait, the handoffs' settle and throttle, seat health and
// unavailability, a freeze's end, the operator moves to clear, the
// removed shards to stop and the absent members' records to collect) are
// a pure core in partition/internal/member, fed the time and the
// session's facts as arguments and tested by tables; each decision
// returns a plan. The loop of this package is the shell: one goroutine
// that feeds the core what the root and the runners report, and one place
// (loopplan.go) that carries out its plans (starting, withdrawing,
// handing off and stopping runners, writing the record, clearing moves,
// deleting records).
package partition
