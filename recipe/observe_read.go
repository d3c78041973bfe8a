package recipe

import (
	"context"
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/znode"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file reads an election's candidates for Leader, Participants and
// Observe.

// maxParallelReads bounds the getData requests Participants has in flight.
const maxParallelReads = 32

// readResult is the leader found by one read.
type readResult struct {
	leader Participant
	ok     bool
}

// dataReader reads one znode, possibly arming a watch on it.
type dataReader func(p string) ([]byte, *zk.Stat, error)

// readLeader reads the leader once, leaving no watch; ctx ends the reads.
func readLeader(ctx context.Context, s *Session, path string) (readResult, error) {
	get := func(p string) ([]byte, *zk.Stat, error) { return s.conn.Get(ctx, p) }
	for {
		names, _, err := s.conn.Children(ctx, path)
		if errors.Is(err, zk.ErrNoNode) {
			return readResult{}, nil
		}
		if err != nil {
			return readResult{}, aclError("list", path, err)
		}
		if len(parseNodes(names)) == 0 {
			return readResult{}, nil
		}
		r, found, err := leaderOf(path, names, get, get)
		if err != nil || found {
			return r, err
		}
	}
}

// leaderOf reads, with get, the first of the children names in election
// order (reading every candidate with plain first when their sequence
// numbers do not tell the order). found is false when that znode vanished
// before it was read: list again.
func leaderOf(path string, names []string, get, plain dataReader) (r readResult, found bool, err error) {
	ns := parseNodes(names)
	if seqOrderAmbiguous(ns) {
		// The suffixes span half the counter's circle: order by czxid,
		// which needs every candidate's stat.
		ps, err := readNodes(path, ns, plain)
		if err != nil || len(ps) == 0 {
			return readResult{}, false, err
		}
		ns = []node{{Name: znode.Name(ps[0].Znode), Seq: ps[0].Seq}}
	}
	sortNodes(ns)
	first := path + "/" + ns[0].Name
	data, st, err := get(first)
	if errors.Is(err, zk.ErrNoNode) {
		return readResult{}, false, nil
	}
	if err != nil {
		return readResult{}, false, aclError("read", first, err)
	}
	p := participantOf(first, ns[0], data, st)
	p.Leader = true
	return readResult{leader: p, ok: true}, true, nil
}

// readParticipants lists the election and reads every candidate's znode;
// ctx ends the reads.
func readParticipants(ctx context.Context, s *Session, path string) ([]Participant, error) {
	names, _, err := s.conn.Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return []Participant{}, nil
	}
	if err != nil {
		return nil, aclError("list", path, err)
	}
	get := func(p string) ([]byte, *zk.Stat, error) { return s.conn.Get(ctx, p) }
	return readNodes(path, parseNodes(names), get)
}

// readNodes reads the znodes ns (children of path) with get, up to
// maxParallelReads at a time, and returns those still present in election
// order, the leader marked.
func readNodes(path string, ns []node, get dataReader) ([]Participant, error) {
	ps := make([]Participant, len(ns))
	found := make([]bool, len(ns))
	errs := make([]error, len(ns))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallelReads)
	for i, n := range ns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := path + "/" + n.Name
			data, st, err := get(p)
			switch {
			case errors.Is(err, zk.ErrNoNode): // left meanwhile
			case err != nil:
				errs[i] = aclError("read", p, err)
			default:
				ps[i], found[i] = participantOf(p, n, data, st), true
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return orderParticipants(ps, found), nil
}

// orderParticipants keeps the found participants, puts them in election
// order (by czxid when the suffixes are ambiguous) and marks the leader.
func orderParticipants(all []Participant, found []bool) []Participant {
	byName := make(map[string]Participant, len(all))
	czxid := make(map[string]int64, len(all))
	ns := make([]node, 0, len(all))
	for i, p := range all {
		if !found[i] {
			continue
		}
		n := node{Name: znode.Name(p.Znode), Seq: p.Seq}
		byName[n.Name], czxid[n.Name] = p, int64(p.Token)
		ns = append(ns, n)
	}
	if seqOrderAmbiguous(ns) {
		sortNodesByCzxid(ns, czxid)
	} else {
		sortNodes(ns)
	}
	out := make([]Participant, len(ns))
	for i, n := range ns {
		out[i] = byName[n.Name]
	}
	if len(out) > 0 {
		out[0].Leader = true
	}
	return out
}

// participantOf builds a Participant from a candidate znode and its stat.
func participantOf(znode string, n node, data []byte, st *zk.Stat) Participant {
	return Participant{
		ID:        string(data),
		Znode:     znode,
		Seq:       n.Seq,
		Token:     zxidfence.Token(st.Czxid),
		SessionID: st.EphemeralOwner,
	}
}
