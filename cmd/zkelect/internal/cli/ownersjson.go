package cli

import "github.com/zkelect/zkelect/zkelecthttp"

// This file names, for the CLI, the JSON documents of package zkelecthttp
// that `status --root -o json`, `watch -o json` and the daemon's endpoints
// share: one definition, so the daemon and the library cannot drift.
type (
	tokenJSON      = zkelecthttp.Token
	shardJSON      = zkelecthttp.Shard
	memberJSON     = zkelecthttp.Member
	leaderEvent    = zkelecthttp.LeaderEvent
	leadershipView = zkelecthttp.Leadership
)

// rootStatus is the status of a partition root: `status --root -o json`,
// the document of the daemon's /v1/owners.
type rootStatus struct{ zkelecthttp.Owners }

var (
	newTokenJSON = zkelecthttp.NewToken
	shardLess    = zkelecthttp.ShardLess
)
