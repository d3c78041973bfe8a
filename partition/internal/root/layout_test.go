package root

import (
	"errors"
	"testing"
)

// TestLayoutRecordsItsBuckets: a bucketed layout survives its encoding
// (the flat one has none: no <root>/buckets); data of a later release
// (another layout, or a field this release does not know), or none, is
// refused.
func TestLayoutRecordsItsBuckets(t *testing.T) {
	for _, l := range []Layout{NewRootLayout, {Buckets: 1}, {Buckets: 65536}} {
		got, err := DecodeLayout(l.Encode())
		if err != nil || got != l {
			t.Errorf("DecodeLayout(%q) = %v, %v; want %v", l.Encode(), got, err, l)
		}
	}
	for _, bad := range []string{`{"layout":"trie"}`, `{"layout":"buckets","buckets":0}`, `junk`, ``,
		`{"layout":"buckets","buckets":1024,"from":"flat"}`} {
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
