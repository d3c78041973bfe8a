package jute

import (
	"errors"
	"reflect"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestACLReplyDecodesWhatTheEncoderWrites: a getACL reply body (the ACL
// vector as create writes it, then a Stat) decodes to the same entries;
// one cut short is ErrMalformed.
func TestACLReplyDecodesWhatTheEncoderWrites(t *testing.T) {
	acl := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: "alice:x"}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	e := &Encoder{}
	e.ACL(acl)
	body := append(e.b, make([]byte, StatLen)...)
	got, st, err := ACLReply(body)
	if err != nil || st == nil || !reflect.DeepEqual(got, acl) {
		t.Fatalf("ACLReply = %v, %v, %v; want %v", got, st, err, acl)
	}
	if _, _, err := ACLReply(body[:len(body)-1]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a reply one byte short: %v; want ErrMalformed", err)
	}
	if _, _, err := ACLReply([]byte{0x7f, 0, 0, 0}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a vector claiming 2^31 entries: %v; want ErrMalformed", err)
	}
}

// TestSetACLRequestHasZooKeepersLayout: a setACL frame is the request
// header (xid, op 7), then SetACLRequest's fields in ZooKeeper's order:
// path, ACL vector, ACL version; its length prefix counts the rest.
func TestSetACLRequestHasZooKeepersLayout(t *testing.T) {
	acl := []zk.ACL{{Perms: zk.PermRead, Scheme: "digest", ID: "alice:hash"}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	f := SetACLRequest(9, "/r/shards", acl, 3)
	d := NewDecoder(f[4:])
	xid, op, p, got, version := d.Int32(), d.Int32(), d.String(), d.ACL(), d.Int32()
	if d.Err() != nil || xid != 9 || op != OpSetACL || p != "/r/shards" || !reflect.DeepEqual(got, acl) || version != 3 {
		t.Fatalf("decoded xid %d op %d path %q acl %v version %d (%v)", xid, op, p, got, version, d.Err())
	}
	if n := int(f[0])<<24 | int(f[1])<<16 | int(f[2])<<8 | int(f[3]); n != len(f)-4 {
		t.Fatalf("length prefix %d, frame body %d bytes", n, len(f)-4)
	}
}
