// Package zkelectd is what the zkelect daemon runs once package cli has
// parsed its flags: the shards daemon's per-shard work (ShardWork: the
// leaderships it holds and, with --exec, one supervised child per led
// shard), the tracking of children being stopped behind its /healthz rule,
// its Prometheus collectors, the HTTP(S) server of /metrics and of package
// zkelecthttp's endpoints with its certificate reloader, the watchdog's
// start and stop for run and shards, and the environment a child gets.
// Children themselves are package supervisor's.
package zkelectd
