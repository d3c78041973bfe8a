// Package bench measures zkelect against the floor ZooKeeper itself sets, on
// a local ensemble: the scenarios behind `zkelect bench`.
//
// Every scenario runs on one testenv ensemble, and each figure is printed
// beside the raw operation that bounds it from below, measured in the same
// run on the same servers:
//
//   - raw floors: a delete seen through another session's data watch, a
//     create round trip, and one session's ephemeral sequential creates per
//     second with many requests in flight;
//   - failover after a resign and after a crash (the leader's connection
//     silenced until its session expires), p50/p99/max over many trials;
//   - the herd check: watch notifications a failover delivers with 100
//     candidates (the recipe's promise is 1);
//   - cold start of 3 partition members over 1,000 and 10,000 shards, moves
//     when a member joins, leaves, crashes and is drained, heap bytes and
//     goroutines per shard, and the servers' own memory; up to 1,000,000
//     shards on a standalone server with the large-fleet steps.
//   - side by side (peers): zkelect, kazoo's Election and Curator's
//     LeaderLatch, each candidate its own process on its own session, each
//     failover timed from the instruction to step down (resign, close and
//     exit, SIGKILL) to the successor's own report on a pipe, both stamped
//     on this process's monotonic clock, beside the delete→notification and
//     session-expiry floors; a library that cannot run is reported missing.
//     The zkelect candidate is this program re-executed (RunChild).
//
// Run starts the ensemble, runs the selected scenarios and returns a Report,
// which prints as a table (WriteTable) and marshals to JSON.
package bench
