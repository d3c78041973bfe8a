package electview

import (
	"context"
	"errors"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// Leader is a shard's leader as its election holds it.
type Leader struct {
	Member  string          // the leader znode's data: its member's id
	Token   zxidfence.Token // the leader znode's czxid
	Session int64           // the session owning the leader znode
	Znode   string          // the leader znode's full path
	Seq     int32           // its sequence number
}

// readLeader reads the leader of the election at p; ok is false when it
// has none (no candidate, no election, or a persistent znode first).
func readLeader(ctx context.Context, sess *recipe.Session, p string) (l Leader, ok bool, err error) {
	part, err := recipe.Leader(ctx, sess, p)
	switch {
	case errors.Is(err, recipe.ErrNoLeader):
		return Leader{}, false, nil
	case err != nil:
		return Leader{}, false, err
	case part.SessionID == 0:
		return Leader{}, false, nil // a persistent znode is no candidate
	}
	return Leader{Member: part.ID, Token: part.Token, Session: part.SessionID, Znode: part.Znode, Seq: part.Seq}, true, nil
}

// before reports whether sequence a comes before b in election order
// (serial-number arithmetic on 32 bits, as recipe orders candidates).
func before(a, b int32) bool { return int32(uint32(b)-uint32(a)) > 0 }
