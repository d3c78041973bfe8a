// Package chaos proves zkelect's safety claims under real faults: it defines
// the history that chaos members record (every leadership term and every
// fenced write attempt, as JSON lines), a Checker that reads such a history
// and reports every violation of the guarantees, and a seeded fault Schedule
// that breaks sessions, processes and ZooKeeper servers in a reproducible
// order.
//
// The Checker fails a history when:
//
//  1. a write was accepted on a resource with a token lower than one accepted
//     there before it (the earlier write had ended before the later began);
//  2. two acting intervals of one shard overlap and the later one's token is
//     not higher than the earlier one's (overlaps with a higher later token
//     are counted, not failed: a paused leader acts until it resumes, and
//     only fencing stops it);
//  3. after the last fault healed, a shard stayed without an acting leader for
//     longer than the session timeout plus a bound, or had none at the end;
//  4. something was left behind: a process that did not exit cleanly, an
//     ephemeral znode after every member stopped, a leaked goroutine, or a
//     data race in a member (recorded as KindLeftover). Races inside
//     go-zookeeper v1.0.4 itself (Conn.lastZxid, read by a reconnect's
//     sendSetWatches while recvLoop writes it) are counted and ignored.
//
// Its summary gives the faults injected by kind, terms and failovers,
// overlapping terms (attributed to the fault before them), writes attempted,
// accepted, rejected as stale or not-leader and failed, unexpected member
// errors, and the longest time each shard went without an acting leader.
//
// The chaos test itself (chaos_test.go) runs members as separate processes
// (the test binary re-executed, see RunMember) against a 3-node ensemble.
// Its length is set with -chaos.duration or ZKELECT_CHAOS_DURATION (default
// 20s; `make chaos` runs 10 minutes), its seed with -chaos.seed or
// ZKELECT_CHAOS_SEED; a failed run keeps its histories and member logs and
// prints where.
package chaos
