package zkconn

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/znode"
)

// GetResult is one path's answer to GetMany: its data and Stat, or the
// error reading it failed with (zk.ErrNoNode, zk.ErrNoAuth, ...).
type GetResult struct {
	Data []byte
	Stat *zk.Stat
	Err  error
}

// GetMany reads the data and Stat of each of paths with one multiRead
// request (ZooKeeper 3.6+), and returns one result per path, in order:
// one round trip and one request in the server's line for all of them,
// each answered on its own (a missing znode fails its own result only).
// The request's errors are Get's (a server before 3.6 answers
// UNIMPLEMENTED, a *CodeError); a *PathError for a path ZooKeeper refuses
// before anything is sent. Keep the reply within jute.maxbuffer: a few
// hundred small znodes a call.
func (s *Conn) GetMany(ctx context.Context, paths []string) ([]GetResult, error) {
	body, err := s.multiRead(ctx, paths, jute.MultiReadDataRequest)
	if err != nil {
		return nil, err
	}
	rs, err := jute.MultiReadDataReply(body)
	if err == nil && len(rs) != len(paths) {
		err = fmt.Errorf("%w: %d results for %d reads", jute.ErrMalformed, len(rs), len(paths))
	}
	if err != nil {
		return nil, malformed("multi read", err)
	}
	out := make([]GetResult, len(rs))
	for i, r := range rs {
		if r.Err != jute.CodeOK {
			out[i].Err = codeError("get data", r.Err)
			continue
		}
		out[i] = GetResult{Data: r.Data, Stat: r.Stat}
		s.noteStat(paths[i], r.Stat)
	}
	return out, nil
}

// ChildrenResult is one path's answer to ChildrenMany: its children's
// names, or the error listing it failed with (zk.ErrNoNode, ...).
type ChildrenResult struct {
	Names []string
	Err   error
}

// ChildrenMany lists the children of each of paths with one multiRead
// request, as GetMany reads data: one result per path, in order, each
// answered on its own. Errors as GetMany's. Keep the replies within
// jute.maxbuffer.
func (s *Conn) ChildrenMany(ctx context.Context, paths []string) ([]ChildrenResult, error) {
	body, err := s.multiRead(ctx, paths, jute.MultiReadChildrenRequest)
	if err != nil {
		return nil, err
	}
	rs, err := jute.MultiReadChildrenReply(body)
	if err == nil && len(rs) != len(paths) {
		err = fmt.Errorf("%w: %d results for %d listings", jute.ErrMalformed, len(rs), len(paths))
	}
	if err != nil {
		return nil, malformed("multi read", err)
	}
	out := make([]ChildrenResult, len(rs))
	for i, r := range rs {
		if r.Err != jute.CodeOK {
			out[i].Err = codeError("get children", r.Err)
			continue
		}
		out[i].Names = r.Names
	}
	return out, nil
}

// multiRead checks paths, sends the request encode makes of them and
// returns the reply's body.
func (s *Conn) multiRead(ctx context.Context, paths []string, encode func(xid int32, paths []string) []byte) ([]byte, error) {
	for _, p := range paths {
		if err := znode.CheckPath(p); err != nil {
			return nil, err
		}
	}
	call := newPendingCall(s.wire.nextCallXid())
	reply, err := s.exchange(ctx, call, encode(call.xid, paths))
	if err != nil {
		return nil, fmt.Errorf("multi read: %w", err)
	}
	return replyBody("multi read", reply)
}
