package recipe

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// Reads without a watch that end with their ctx, for Leader, Participants
// and Observe. go-zookeeper's Get and Children take no context: a caller
// that gives up on one leaves it running until the server answers. The
// session writes these requests itself and reads their replies by xid
// (wirecall.go), like GetW and ChildrenW without the watch flag, so a
// cancelled read holds nothing; the request stays in flight on the wire
// until answered, which costs nothing.

// getData returns the data and Stat of the znode at path. A reply larger
// than the session keeps (maxCaptured) is read again with go-zookeeper's
// Get. Errors are go-zookeeper's (zk.ErrNoNode, zk.ErrNoAuth; one
// wrapping zk.ErrConnectionClosed when the outcome is unknown),
// ErrSessionClosed, or ctx's error; they do not name path.
func (s *Session) getData(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	return plainRead(ctx, s, readData, path, decodeDataReply, s.conn.Get)
}

// children returns the names of the children of the znode at path; a reply
// larger than the session keeps is read again with go-zookeeper's
// Children. Errors are as for getData.
func (s *Session) children(ctx context.Context, path string) ([]string, error) {
	names, _, err := plainRead(ctx, s, readChildren, path, decodeChildrenReply, s.conn.Children)
	return names, err
}

// plainRead writes r's request for path without the watch flag, waits for
// its reply (at most until ctx ends) and decodes it; a reply whose body the
// session did not keep is read again with plain.
func plainRead[T any](ctx context.Context, s *Session, r watchedRead, path string,
	decode func([]byte) (T, *zk.Stat, error), plain func(string) (T, *zk.Stat, error)) (T, *zk.Stat, error) {
	var zero T
	call := newPendingCall(s.wire.nextCallXid())
	reply, err := s.exchange(ctx, call, readFrame(r.op, call.xid, path, false))
	if err != nil {
		return zero, nil, err
	}
	body, err := replyBody(r.name, reply)
	switch {
	case errors.Is(err, errBodyNotKept):
		return plain(path)
	case err != nil:
		return zero, nil, err
	}
	return decode(body)
}
