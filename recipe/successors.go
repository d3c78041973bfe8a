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
// election on session s and one getData of each candidate's znode that
// sorts after leader's. A handoff asks it before resigning (is the
// successor there yet?), once a shard; Participants would read the
// leader's znode too.
//
// It returns an empty slice when nobody waits, when leader's znode is no
// longer in the election (a candidate that sorted after it may lead now:
// it is not waiting) or the election is gone;
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
	ns, ok := behind(parseNodes(names), znode.Name(leader))
	if !ok {
		return []Participant{}, nil // the leader's znode is gone: nobody waits behind it
	}
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

// behind returns the nodes of ns that sort after the one named leader in
// election order, and false when leader is not among them. When the
// sequence numbers do not tell the order (they span half the counter's
// circle, see seqOrderAmbiguous) every other node is returned: readNodes
// orders them by czxid, and one that sorts before leader's cannot be
// queued behind a leader that holds its leadership.
func behind(ns []node, leader string) ([]node, bool) {
	i := slices.IndexFunc(ns, func(n node) bool { return n.Name == leader })
	if i < 0 {
		return nil, false
	}
	mine, ambiguous := ns[i], seqOrderAmbiguous(ns)
	return slices.DeleteFunc(ns, func(n node) bool {
		return n.Name == leader || !ambiguous && n.Seq < mine.Seq
	}), true
}
