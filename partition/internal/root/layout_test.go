package root

import (
	"errors"
	"testing"
)

// TestLayoutRecordsItsBuckets: a layout survives its encoding; empty data
// is the flat layout; data of a later release is refused.
func TestLayoutRecordsItsBuckets(t *testing.T) {
	for _, l := range []Layout{Flat, NewRootLayout, {Buckets: 1}, {Buckets: 65536}} {
		got, err := DecodeLayout(l.Encode())
		if err != nil || got != l {
			t.Errorf("DecodeLayout(%q) = %v, %v; want %v", l.Encode(), got, err, l)
		}
	}
	for _, bad := range []string{`{"layout":"trie"}`, `{"layout":"buckets","buckets":0}`, `junk`} {
		if _, err := DecodeLayout([]byte(bad)); !errors.Is(err, ErrUnknownLayout) {
			t.Errorf("DecodeLayout(%s) = %v, want ErrUnknownLayout", bad, err)
		}
	}
	if b, p := NewRootLayout.Bucket("shard-7"), NewRootLayout.ShardPath("/r", "shard-7"); p != "/r/shards/"+b+"/shard-7" || !NewRootLayout.isBucket(b) {
		t.Errorf("shard-7: bucket %q, path %q", b, p)
	}
	if got := Flat.ShardPath("/r", "shard-7"); got != "/r/shards/shard-7" {
		t.Errorf("flat path %q", got)
	}
}
