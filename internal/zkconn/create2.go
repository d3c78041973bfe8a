package zkconn

import (
	"context"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/znode"
)

// go-zookeeper v1.0.4's Create returns no Stat, so a candidate would have to
// read its new znode back for the czxid (its fencing token) and owner. The
// layer writes ZooKeeper's create2 (3.5+) itself instead, whose reply
// carries the Stat, and reads that reply off the wire (see wirecall.go).

// Create2Call is a create2 request in flight: SendCreate2 writes it,
// Result waits for its reply, so a caller can pipeline a read behind it.
type Create2Call struct {
	s    *Conn
	call *pendingCall
}

// SendCreate2 writes create2(path, data, flags, acl) on the ready
// connection (after the session's credentials are replayed on it) and
// returns without waiting for the reply. An error wrapping
// zk.ErrConnectionClosed means no connection took it in time (the request
// may still have reached a server); a *PathError a path ZooKeeper refuses;
// ctx's error when ctx ended first. ctx bounds only the write.
func (s *Conn) SendCreate2(ctx context.Context, path string, data []byte, flags int32, acl []zk.ACL) (*Create2Call, error) {
	if err := znode.CheckPath(path); err != nil {
		return nil, err
	}
	call := newPendingCall(s.wire.nextCallXid())
	if err := s.write(ctx, call, jute.CreateRequest(call.xid, jute.OpCreate2, path, data, flags, acl), false); err != nil {
		return nil, fmt.Errorf("create2 %s: %w", path, err)
	}
	return &Create2Call{s: s, call: call}, nil
}

// Result waits for the reply, at most callBound of the session timeout or
// until ctx ends: the created path and its Stat. An error wrapping
// zk.ErrConnectionClosed (or ctx's) means the outcome is unknown.
func (c *Create2Call) Result(ctx context.Context) (string, *zk.Stat, error) {
	body, err := c.s.await(ctx, c.call)
	if err != nil {
		return "", nil, fmt.Errorf("create2: %w", err)
	}
	return decodeCreate2(body)
}
