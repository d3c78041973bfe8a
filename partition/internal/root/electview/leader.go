package electview

import "github.com/zkelect/zkelect/zxidfence"

// Leader is a shard's leader as its election holds it.
type Leader struct {
	Member  string          // the leader znode's data: its member's id
	Token   zxidfence.Token // the leader znode's czxid
	Session int64           // the session owning the leader znode
	Znode   string          // the leader znode's full path
	Seq     int32           // its sequence number
}

// before reports whether sequence a comes before b in election order
// (serial-number arithmetic on 32 bits, as recipe orders candidates).
func before(a, b int32) bool { return int32(uint32(b)-uint32(a)) > 0 }
