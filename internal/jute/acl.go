package jute

import "github.com/go-zookeeper/zk"

// GetACLRequest encodes getACL(path) (ZooKeeper's GetACLRequest: the path
// alone, no watch flag).
func GetACLRequest(xid int32, path string) []byte {
	e := NewRequest(xid, OpGetACL, 4+len(path))
	e.String(path)
	return e.Frame()
}

// SetACLRequest encodes setACL(path, acl, version) (ZooKeeper's
// SetACLRequest); version is the znode's ACL version (Stat.Aversion), -1
// for any. Its reply is a Stat (StatReply).
func SetACLRequest(xid int32, path string, acl []zk.ACL, version int32) []byte {
	n := 12 + len(path)
	for _, a := range acl {
		n += 12 + len(a.Scheme) + len(a.ID)
	}
	e := NewRequest(xid, OpSetACL, n)
	e.String(path)
	e.ACL(acl)
	e.Int32(version)
	return e.Frame()
}

// ACLReply decodes the body of a getACL reply (GetACLResponse): the ACL
// entries, Stat.
func ACLReply(body []byte) ([]zk.ACL, *zk.Stat, error) {
	r := NewDecoder(body)
	acl := r.ACL()
	st := r.Stat()
	return acl, st, r.Err()
}

// ACL reads a vector of ACL entries (perms, scheme, id each); -1 is a
// null vector (nil).
func (r *Decoder) ACL() []zk.ACL {
	n := r.Int32()
	if n == -1 || r.bad {
		return nil
	}
	if n < 0 || int(n) > len(r.b)/12 { // each entry takes at least 12 bytes
		r.bad = true
		return nil
	}
	out := make([]zk.ACL, 0, n)
	for range n {
		perms := r.Int32()
		scheme := r.String()
		out = append(out, zk.ACL{Perms: perms, Scheme: scheme, ID: r.String()})
	}
	return out
}
