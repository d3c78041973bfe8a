package zkelectd

// Environment variables handed to a child started by run and by shards,
// beside EnvShard (shards only).
const (
	EnvFencingToken  = "ZKELECT_FENCING_TOKEN"  // the leadership's token, decimal
	EnvElection      = "ZKELECT_ELECTION"       // the election path
	EnvZnode         = "ZKELECT_ZNODE"          // the leader's znode
	EnvZnodeVersion  = "ZKELECT_ZNODE_VERSION"  // its data version, for the ZooKeeper guard
	EnvParticipantID = "ZKELECT_PARTICIPANT_ID" // this candidate's id
)
