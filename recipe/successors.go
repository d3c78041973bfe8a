package recipe

import (
	"context"
	"errors"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/znode"
)

// Successors returns the candidates queued behind the candidate znode
// leader (a full path, such as a Leadership's Znode) in the election at
// path, in election order (none has Leader set): one listing of the
// election on session s and one getData of each candidate's znode but
// leader's own. A handoff asks it before resigning (is the successor
// there yet?), once a shard; Participants would read the leader's znode
// too.
//
// It returns an empty slice when nobody waits or the election is gone;
// ErrNilSession for a nil s; an error wrapping ErrInvalidPath for a path
// that is not a valid znode path; an *ACLError
// when a listing or a read is denied; an error wrapping ErrSessionClosed
// once s was closed; and ctx's error or the connection's
// (zk.ErrConnectionClosed) when the reads did not complete. Candidates
// that leave meanwhile are left out.
func Successors(ctx context.Context, s *Session, path, leader string) ([]Participant, error) {
	if err := checkElection(s, path); err != nil {
		return nil, err
	}
	names, _, err := s.conn.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return []Participant{}, nil
	}
	if err != nil {
		return nil, sessionErr(s, aclError("list", path, err))
	}
	mine := znode.Name(leader)
	ns := slices.DeleteFunc(parseNodes(names), func(n node) bool { return n.Name == mine })
	get := func(p string) ([]byte, *zk.Stat, error) { return s.conn.Get(ctx, p) }
	ps, err := readNodes(path, ns, get)
	if err != nil {
		return nil, sessionErr(s, err)
	}
	for i := range ps {
		ps[i].Leader = false // the first of those behind leader, not the leader
	}
	return ps, nil
}
