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
// so a candidate creates a missing election znode and its parent with it
// (ancestors above stay open, see WithACL), and before each campaign it
// refuses an election znode or parent that others may delete or change
// (CheckACL, WithACLCheck). "auth" grants every identity of the session,
// the x509 subject of a TLS client certificate included: where one client
// keystore is shared (common with ssl.clientAuth=need), anyone holding it
// gets all permissions. Name the identity instead where that matters:
// zk.DigestACL(zk.PermAll, user, password) or {Scheme: "sasl", ID: user},
// with world:anyone:r. On a session without credentials ZooKeeper refuses
// a create with this ACL (zk.ErrInvalidACL, wrapped in ErrACLDenied).
func GroupACL() []zk.ACL {
	return []zk.ACL{
		{Perms: zk.PermAll, Scheme: "auth", ID: ""},
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"},
	}
}
