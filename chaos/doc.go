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
//  4. something was left behind: a process that did not exit, an ephemeral
//     znode after every member stopped, or a leaked goroutine (recorded as
//     KindLeftover).
//
// The chaos test itself (chaos_test.go) runs members as separate processes
// (the test binary re-executed) against a 3-node ensemble. Its length is set
// with -chaos.duration or ZKELECT_CHAOS_DURATION, its seed with -chaos.seed
// or ZKELECT_CHAOS_SEED.
package chaos
