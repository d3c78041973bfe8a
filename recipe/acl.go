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
// member of the group. A candidate creates a missing election znode with
// it and missing ancestors with SharedParentACL (see WithACL), and it
// refuses an election znode or parent that others may delete or change,
// before its create and again once its znode exists (CheckACL,
// WithACLCheck). "auth" grants every identity of the session,
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

// SharedParentACL returns the ACL a member gives a missing ancestor of its
// election path (or partition root) when it creates one: for a secured acl
// (one that lets nobody outside it change things), world:anyone:cr, so
// that the level stays shared: any group may create its own election or
// root there, nobody may delete a child (ZooKeeper checks a delete against
// the parent's ACL, so an idle election path or root cannot be deleted and
// made again open) or change the ACL. For an open acl it is
// world:anyone:cdrwa, as everything else then is. Ancestors that exist
// keep their ACL. A child of such a level may be created by anyone first:
// a secured member refuses a path it finds open (CheckACL), before its
// create and again after it.
func SharedParentACL(acl []zk.ACL) []zk.ACL {
	if !secured(acl) {
		return zk.WorldACL(zk.PermAll)
	}
	return zk.WorldACL(zk.PermCreate | zk.PermRead)
}
