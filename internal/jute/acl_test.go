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
