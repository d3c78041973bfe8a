package root

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// gzipped returns data gzipped.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestGzipBombRecordIsRefusedUnread: a record of about 61 KB of gzip that
// decompresses to 60 MiB (an address of 60 MiB) is refused by a reader of
// 8 shards after reading no more than its bound (157 KB), with the
// arithmetic in the error; the old decoder read all 60 MiB. A reader
// without a shard list refuses it too (16 MiB).
func TestGzipBombRecordIsRefusedUnread(t *testing.T) {
	plain := []byte(`{"session":1,"leading":{"0":5},"address":"` + strings.Repeat("A", 60<<20) + `"}`)
	bomb := gzipped(t, plain)
	plain = nil
	t.Logf("gzip record: %d bytes, 60 MiB decompressed", len(bomb))
	for _, c := range []struct {
		name   string
		b      *Bounds
		reason string
		alloc  uint64
	}{
		{"8 shards", NewBounds(Range(0, 8)), "157472 = 131072 + (4 x 8 shards + 1024) claims x (1 bytes of the longest id + 24)", 2 << 20},
		{"no shard list", OutsideBounds(), "a reader without a shard list takes at most 16777216 bytes", 96 << 20}, // io.ReadAll doubles its buffer
	} {
		var err error
		n := allocated(func() { _, err = DecodeRecordWithin(bomb, c.b) })
		var be *BoundError
		if !errors.As(err, &be) || !errors.Is(err, ErrOverBound) || be.Max != c.b.RecordBytes() {
			t.Fatalf("%s: DecodeRecordWithin(gzip bomb) = %v, want a *BoundError at %d bytes", c.name, err, c.b.RecordBytes())
		}
		if !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: error %q lacks the arithmetic %q", c.name, err, c.reason)
		}
		if n > c.alloc {
			t.Errorf("%s: decoding the refused record allocated %d bytes, want at most %d", c.name, n, c.alloc)
		}
	}
}

// TestRecordClaimsOfUnknownShardsAreDropped: a reader keeps the claims of
// the shards it runs only, in the form Encode writes and in any other
// (encoding/json's path); a record of 300,000 claims is refused whole by a
// reader of 8 shards.
func TestRecordClaimsOfUnknownShardsAreDropped(t *testing.T) {
	b := NewBounds([]string{"0", "1", "2"})
	rec := Record{Session: 7, Leading: map[string]uint64{"0": 5, "x": 6, "zz": 7}, Reserved: []string{"1", "y"}, Unavailable: []string{"2", "w"}}
	data, err := rec.Encode()
	if err != nil {
		t.Fatal(err)
	}
	spaced := bytes.Replace(data, []byte(`{"session":7,`), []byte(`{ "session": 7, `), 1) // not Encode's form
	for _, in := range [][]byte{data, spaced} {
		got, err := DecodeRecordWithin(in, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Leading) != 1 || got.Leading["0"] != 5 || fmt.Sprint(got.Reserved) != "[1]" || fmt.Sprint(got.Unavailable) != "[2]" {
			t.Errorf("decoded %s as %+v, want only shards 0, 1 and 2", in, got)
		}
	}
	data = claimingRecord(t, 7, 300_000)
	if _, err := DecodeRecordWithin(data, NewBounds(Range(0, 8))); !errors.Is(err, ErrOverBound) {
		t.Errorf("a record of 300,000 claims (%d bytes of gzip) read by a member of 8 shards: %v, want ErrOverBound", len(data), err)
	}
}

// claimingRecord returns a record of session claiming the shards "0" to
// n-1, gzipped (default compression: 300,000 claims take about 800 KB).
func claimingRecord(t testing.TB, session int64, n int) []byte {
	rec := Record{Session: session, Leading: map[string]uint64{}}
	for i := range n {
		rec.Leading[fmt.Sprint(i)] = uint64(i + 1)
	}
	data, err := marshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	return gzipped(t, data)
}

// TestLargestRecordsAMemberWritesAreRead: the largest record a member of a
// list writes (every shard led and unavailable, the longest address of
// characters JSON escapes, MaxLabels labels of the longest keys and
// values) is within the bounds of a reader of the same list, at 64 and at
// 100,000 shards.
func TestLargestRecordsAMemberWritesAreRead(t *testing.T) {
	labels := map[string]string{}
	for i := range MaxLabels {
		labels[fmt.Sprintf("%0*d", MaxLabelKey, i)] = strings.Repeat("<", MaxLabelValue)
	}
	for _, n := range []int{64, 100_000} {
		ids := Range(0, n)
		rec := Record{Session: 1, Leading: map[string]uint64{}, Unavailable: ids, ShardSet: strings.Repeat("f", 64),
			Address: strings.Repeat("&", MaxAddress), Labels: labels, Weight: MaxWeight, Buckets: true, Migrate: true}
		for _, id := range ids {
			rec.Leading[id] = 1<<64 - 1
		}
		data, err := rec.Encode()
		if err != nil {
			t.Fatalf("%d shards: %v", n, err)
		}
		got, err := DecodeRecordWithin(data, NewBounds(ids))
		if err != nil || len(got.Leading) != n || got.Address != rec.Address || len(got.Labels) != MaxLabels {
			t.Errorf("%d shards: the largest record a member writes (%d bytes stored) read as %d claims, %v", n, len(data), len(got.Leading), err)
		}
	}
}

// TestRecordAddressAndLabelsValidatedOnRead: an address or labels holding
// terminal escapes, newlines or bidirectional overrides are dropped from
// the record read; its claims still count.
func TestRecordAddressAndLabelsValidatedOnRead(t *testing.T) {
	for _, bad := range []Record{
		{Address: "\x1b[2J\x1b]0;owned\a10.0.0.9:80"},
		{Address: "10.0.0.9:80\nfake line"},
		{Address: "10.0.0.9:80\u202e"},
		{Labels: map[string]string{"zone": "eu\x1b[31m"}},
		{Labels: map[string]string{"zo\nne": "eu"}},
		{Labels: map[string]string{"": "eu"}},
	} {
		bad.Session, bad.Leading = 3, map[string]uint64{"0": 9}
		data, err := bad.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRecordWithin(data, NewBounds([]string{"0"}))
		if err != nil || got.Address != "" || got.Labels != nil || got.Leading["0"] != 9 {
			t.Errorf("record with address %q labels %q read as address %q labels %q leading %v (%v); want them dropped, the claim kept",
				bad.Address, bad.Labels, got.Address, got.Labels, got.Leading, err)
		}
	}
	if err := ValidateAddress("http://10.0.0.9:8080/zürich"); err != nil {
		t.Errorf("a plain address refused: %v", err)
	}
	if err := ValidateLabels(map[string]string{"zone": "eu-west-1", "version": "1.2.3"}); err != nil {
		t.Errorf("plain labels refused: %v", err)
	}
}

// TestOperatorStateOverItsBoundIsRefused: operator state larger than what
// Operator writes is refused.
func TestOperatorStateOverItsBoundIsRefused(t *testing.T) {
	data := []byte(`{"pins":{"0":"` + strings.Repeat("a", maxRecordBytes) + `"}}`)
	if _, err := DecodeOperatorState(data); !errors.Is(err, ErrOverBound) {
		t.Errorf("operator state of %d bytes: %v, want ErrOverBound", len(data), err)
	}
}
