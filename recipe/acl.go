package recipe

import "github.com/go-zookeeper/zk"

// GroupACL returns the ACL that lets only the group's identity change or
// delete what it creates while anyone may read: all permissions for the
// identities the creating session authenticated as (ZooKeeper's "auth"
// scheme, Java's ZooDefs.Ids.CREATOR_ALL_ACL: the server stores the
// session's digest, sasl or x509 ids in its place) and read for everyone
// (world:anyone:r).
//
// Give it to WithACL (and partition.Config.ACL) on a session authenticated
// with WithDigestAuth or WithSASL, with the same credentials in every
// member of the group. ZooKeeper checks a delete against the parent's ACL,
// so the election znode (the candidates' parent) must carry it too: a
// candidate creates a missing election znode with its ACL (and missing
// ancestors above it open), but one made earlier with an open ACL keeps it
// (set it with zkCli's setAcl). On a session without credentials
// ZooKeeper refuses a create with this ACL (zk.ErrInvalidACL, wrapped in
// ErrACLDenied).
func GroupACL() []zk.ACL {
	return []zk.ACL{
		{Perms: zk.PermAll, Scheme: "auth", ID: ""},
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
	}
}
