package zkconn

import (
	"context"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// GetACL returns the ACL of the znode at path and its Stat (ZooKeeper's
// getACL). ZooKeeper 3.6+ answers a session with read or admin permission
// on the znode (zk.ErrNoAuth otherwise) and, without admin, shows digest
// ids as user:x (FinalRequestProcessor). Errors are those of the other
// operations (ops.go): zk.ErrNoNode when the znode does not exist.
func (s *Conn) GetACL(ctx context.Context, path string) ([]zk.ACL, *zk.Stat, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.GetACLRequest(xid, path)
	})
	if err != nil {
		return nil, nil, err
	}
	body, err := replyBody("get acl", reply)
	if err != nil {
		return nil, nil, err
	}
	acl, st, err := jute.ACLReply(body)
	return acl, st, malformed("get acl", err)
}

// SetACL sets the ACL of the znode at path if its ACL version
// (Stat.Aversion) is version (-1: any) and returns its new Stat
// (ZooKeeper's setACL, which needs ADMIN on the znode: zk.ErrNoAuth
// otherwise). Errors are those of the other writes (ops.go):
// zk.ErrNoNode, zk.ErrBadVersion, zk.ErrInvalidACL.
func (s *Conn) SetACL(ctx context.Context, path string, acl []zk.ACL, version int32) (*zk.Stat, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.SetACLRequest(xid, path, acl, version)
	})
	if err != nil {
		return nil, err
	}
	return decodeStat("set acl", reply)
}
