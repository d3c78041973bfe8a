package recipe

import (
	"context"

	"github.com/zkelect/zkelect/internal/zkconn"
)

// GetResult is one path's answer to GetMany: its data and Stat, or the
// error reading that znode failed with (zk.ErrNoNode, zk.ErrNoAuth, ...).
type GetResult = zkconn.GetResult

// GetMany reads the data and Stat of each of paths with one request
// (ZooKeeper 3.6+ multiRead) and returns one result per path, in order:
// one round trip and one request in the server's line for all, where
// len(paths) Gets cost as many requests. Each read is answered on its own:
// a missing znode fails its result, not the call. Like Get it is a read,
// asked again on a transient error; its errors are Get's (a server before
// 3.6 answers UNIMPLEMENTED). Keep a call to a few hundred small znodes
// (the reply must fit jute.maxbuffer).
func (s *Session) GetMany(ctx context.Context, paths []string) ([]GetResult, error) {
	if s == nil {
		return nil, ErrNilSession
	}
	var out []GetResult
	err := s.read(ctx, func() (err error) {
		out, err = s.conn.GetMany(ctx, paths)
		return err
	})
	return out, err
}

// ChildrenResult is one path's answer to ChildrenMany: its children's
// names, or the error listing it failed with (zk.ErrNoNode, ...).
type ChildrenResult = zkconn.ChildrenResult

// ChildrenMany lists the children of each of paths with one request
// (multiRead), as GetMany reads data: one result per path, in order, each
// answered on its own; retried and failing as GetMany.
func (s *Session) ChildrenMany(ctx context.Context, paths []string) ([]ChildrenResult, error) {
	if s == nil {
		return nil, ErrNilSession
	}
	var out []ChildrenResult
	err := s.read(ctx, func() (err error) {
		out, err = s.conn.ChildrenMany(ctx, paths)
		return err
	})
	return out, err
}
