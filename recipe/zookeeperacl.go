package recipe

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// GetACL returns the ACL of the znode at path and its Stat (ZooKeeper's
// getACL; a read, asked again on a transient answer as Get is). ZooKeeper
// answers a session with read or admin permission on the znode
// (ErrACLDenied otherwise) and, without admin, shows digest ids as user:x.
// Errors are those of Get.
func (s *Session) GetACL(ctx context.Context, path string) ([]zk.ACL, *zk.Stat, error) {
	if s == nil {
		return nil, nil, ErrNilSession
	}
	var acl []zk.ACL
	var st *zk.Stat
	err := s.read(ctx, func() (err error) {
		acl, st, err = s.conn.GetACL(ctx, path)
		return err
	})
	return acl, st, err
}

// SetACL sets the ACL of the znode at path if its ACL version
// (Stat.Aversion) is version (-1: any) and returns its new Stat
// (ZooKeeper's setACL; a write, not retried). ZooKeeper requires ADMIN on
// the znode: ErrACLDenied (wrapping zk.ErrNoAuth) otherwise. Other errors
// are those of Set: zk.ErrNoNode, zk.ErrBadVersion, zk.ErrInvalidACL.
func (s *Session) SetACL(ctx context.Context, path string, acl []zk.ACL, version int32) (*zk.Stat, error) {
	if s == nil {
		return nil, ErrNilSession
	}
	st, err := s.conn.SetACL(ctx, path, acl, version)
	return st, denied(fromLayer(err))
}
