package root

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestLayoutRecordsItsBuckets: a bucketed layout survives its encoding
// (the flat one has none: no <root>/buckets); data of a later release
// (another layout, or a field this release does not know), or none, is
// refused.
func TestLayoutRecordsItsBuckets(t *testing.T) {
	for _, l := range []Layout{NewRootLayout, {Buckets: 1}, {Buckets: 65536}, {Buckets: 1024, FromFlat: true}} {
		got, err := DecodeLayout(l.Encode())
		if err != nil || got != l {
			t.Errorf("DecodeLayout(%q) = %v, %v; want %v", l.Encode(), got, err, l)
		}
	}
	for _, bad := range []string{`{"layout":"trie"}`, `{"layout":"buckets","buckets":0}`, `junk`, ``,
		`{"layout":"buckets","buckets":1024,"to":"trie"}`, `{"layout":"buckets","buckets":1024,"from":"trie"}`} {
		if _, err := DecodeLayout([]byte(bad)); !errors.Is(err, ErrUnknownLayout) {
			t.Errorf("DecodeLayout(%s) = %v, want ErrUnknownLayout", bad, err)
		}
	}
	if b, p := NewRootLayout.Bucket("shard-7"), NewRootLayout.ShardPath("/r", "shard-7"); p != "/r/buckets/"+b+"/shard-7" || !NewRootLayout.isBucket(b) {
		t.Errorf("shard-7: bucket %q, path %q", b, p)
	}
	if got := Flat.ShardPath("/r", "shard-7"); got != "/r/shards/shard-7" {
		t.Errorf("flat path %q", got)
	}
}

// TestShardsLockKeepsOnlyRead: the lock ACL keeps each entry's identity
// with READ alone, and is what ShardsLocked recognises; the ACL it came
// from is not.
func TestShardsLockKeepsOnlyRead(t *testing.T) {
	acl := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: "alice:hash"}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	lock := ShardsLockACL(acl)
	want := []zk.ACL{{Perms: zk.PermRead, Scheme: "digest", ID: "alice:hash"}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	if !slices.Equal(lock, want) || !ShardsLocked(lock) || ShardsLocked(acl) || acl[0].Perms != zk.PermAll {
		t.Fatalf("ShardsLockACL(%v) = %v (locked %v; the original's %v), want %v", acl, lock, ShardsLocked(lock), ShardsLocked(acl), want)
	}
}
