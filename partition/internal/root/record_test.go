package root

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, n := range []int{0, 10, 20000} {
		r := Record{Session: 0x1000000abc, Leading: map[string]uint64{}, Reserved: []string{"r1", "r2"}}
		for i := range n {
			r.Leading[fmt.Sprintf("orders-%06d", i)] = uint64(1)<<32 | uint64(i)
		}
		data, err := r.Encode()
		if err != nil {
			t.Fatalf("encode %d shards: %v", n, err)
		}
		got, err := DecodeRecord(data)
		if err != nil {
			t.Fatalf("decode %d shards: %v", n, err)
		}
		if got.Session != r.Session || !maps.Equal(got.Leading, r.Leading) || len(got.Reserved) != 2 {
			t.Fatalf("round trip of %d shards changed the record", n)
		}
		t.Logf("%d shards: %d bytes", n, len(data))
	}
}

func TestRecordTooLargeIsRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := Record{Leading: map[string]uint64{}}
	for i := range 20000 {
		var id strings.Builder
		for range 25 {
			fmt.Fprintf(&id, "%08x", rng.Uint32())
		}
		r.Leading[id.String()] = uint64(i)
	}
	if _, err := r.Encode(); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("encode of a huge record: %v, want ErrRecordTooLarge", err)
	}
}
