package root

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// TestLeadingDecodesAsEncodingJSON: the leading map's fast path gives
// what encoding/json gives, for the form json.Marshal writes and for every
// other form (which it leaves to encoding/json), errors included.
func TestLeadingDecodesAsEncodingJSON(t *testing.T) {
	inputs := []string{
		`{}`, `null`, `{"a":1}`, `{"a":1,"b":2}`, `{"":0}`, `{"a":1,"a":2}`,
		`{"a":18446744073709551615}`, `{"a":18446744073709551616}`, `{"a":99999999999999999999}`,
		`{"a":01}`, `{"a":-1}`, `{"a":1.5}`, `{"a":1e3}`, `{"a":"1"}`, `{"a":}`, `{"a" :1}`, `{ "a":1}`,
		`{"a":1,}`, `{,"a":1}`, `{"a":1 ,"b":2}`, `{"a\u0062":1}`, `{"\\":1}`, `{"é":1}`, `{"a\"b":1}`,
		`{"a":1"b":2}`, `{"a"1}`, `{"a":1}}`, `{"a":null}`, `[]`, `{"a,b":1,"c":2}`, `{"a<>&":3}`,
	}
	big := map[string]uint64{}
	for i := range 3000 {
		big[fmt.Sprintf("orders-%06d", i)] = uint64(1)<<40 | uint64(i)
	}
	data, err := json.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, string(data))
	plain, err := json.Marshal(Record{Session: 7, Leading: big, Reserved: []string{"r"}, Weight: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, ok := decodeFast(plain, OutsideBounds(), nil); !ok || len(r.Leading) != len(big) || r.Weight != 2 {
		t.Fatalf("the form json.Marshal writes is not decoded by the fast path")
	}
	var docs []string
	for _, in := range inputs {
		docs = append(docs, `{"session":7,"leading":`+in+`}`, `{"session":7,"leading":`+in+`,"reserved":["r"],"weight":2}`,
			`{"session":7,"leading":`+in+`,"leading":{"z":9}}`, `{"leading":`+in+`,"session":7}`)
	}
	docs = append(docs, `{"session":-7,"leading":{"a":1}}`, `{"session":07,"leading":{"a":1}}`, `{"session":7 ,"leading":{"a":1}}`,
		`{"session":7,"leading":{"a":1},"reserved":["leading"]}`, `{"session":7,"leading":{"a":1}`, `{"session":7,"leading":{"a":1}}x`)
	for _, doc := range docs {
		in := []byte(doc)
		var want Record
		wantErr := json.Unmarshal(in, &want)
		got, err := DecodeRecord(in)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%.60s: error %v, encoding/json's %v", doc, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%.80s: %+v, encoding/json's %+v", doc, got, want)
		}
	}
}

// BenchmarkDecodeRecord decodes a record of 20,000 leaderships (a member's
// share of 100,000 shards over 5), gzipped as it is written.
func BenchmarkDecodeRecord(b *testing.B) {
	r := Record{Session: 1, Leading: map[string]uint64{}}
	for i := range 20000 {
		r.Leading[fmt.Sprintf("shard-%06d", i)] = uint64(1)<<40 | uint64(i)
	}
	data, err := r.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRecord(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRecordEncodesAsEncodingJSON: Encode's hand-written leading map gives
// json.Marshal's bytes, escapes included.
func TestRecordEncodesAsEncodingJSON(t *testing.T) {
	ids := []string{"", "a", "orders-000001", `a"b`, `a\b`, "<x>", "a&b", "é", "\u2028", "tab\t", "z~", "\x7f"}
	for _, leading := range []map[string]uint64{nil, {}, {"a": 0}} {
		checkMarshal(t, Record{Session: -3, Leading: leading, Reserved: []string{"r"}})
	}
	all := map[string]uint64{}
	for i, id := range ids {
		all[id] = uint64(i) << 60
	}
	checkMarshal(t, Record{Session: 0x1000000abc, Leading: all, Weight: 3, Labels: map[string]string{"k": "v"}, Buckets: true})
}

func checkMarshal(t *testing.T, r Record) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalRecord(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("marshalRecord: %s (%v), json.Marshal: %s", got, err, want)
	}
}

// BenchmarkDecodeRecordWithin1M decodes what a member of a 1,000,000-shard
// fleet reads on each change elsewhere: a record of 10,000 leaderships
// (a share of 1,000,000 over 100), gzipped, within the bounds of the
// whole list (each claim checked against it, or, read again, against the
// record before).
func BenchmarkDecodeRecordWithin1M(b *testing.B) {
	ids := make([]string, 1_000_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("shard-%08d", i)
	}
	bounds := NewBounds(ids)
	r := Record{Session: 1, Leading: map[string]uint64{}}
	for i := 1; i < len(ids); i += 100 {
		r.Leading[ids[i]] = uint64(1)<<40 | uint64(i)
	}
	data, err := r.Encode()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("first", func(b *testing.B) { // a record read for the first time
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeRecordWithin(data, bounds); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("again", func(b *testing.B) { // the same member's next record (its watcher's RecordDecoder)
		var dec RecordDecoder
		b.ReportAllocs()
		for b.Loop() {
			if _, err := dec.Decode(data, bounds); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRecordDecoderReusesIDs: a RecordDecoder fed one member's successive
// records decodes each as DecodeRecordWithin does: with the ids of the
// record before standing for the bounds' lookups, with other bounds (an
// id no longer run is dropped, though the record before had it), with
// keys out of order; and the ids it keeps are the shard list's strings
// (no allocation a claim).
func TestRecordDecoderReusesIDs(t *testing.T) {
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%03d", i)
	}
	b1 := NewBounds(ids)
	b2 := NewBounds(slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == "s030" }))
	record := func(from, to int, extra ...string) []byte {
		r := Record{Session: 7, Leading: map[string]uint64{}}
		for i := from; i < to; i++ {
			r.Leading[ids[i]] = uint64(i + 1)
		}
		for _, s := range extra {
			r.Leading[s] = 1
		}
		data, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	unsorted := []byte(`{"session":7,"leading":{"s050":1,"s010":2,"s030":3,"zz":4,"s011":5}}`)
	var dec RecordDecoder
	for k, c := range []struct {
		data []byte
		b    *Bounds
	}{
		{record(0, 50), b1}, {record(25, 75, "x"), b1}, {record(25, 75, "x"), b2}, {record(20, 40), b2},
		{unsorted, b1}, {record(0, 60), b1}, {unsorted, b1},
	} {
		got, err := dec.Decode(c.data, c.b)
		want, werr := DecodeRecordWithin(c.data, c.b)
		if err != nil || werr != nil || !maps.Equal(got.Leading, want.Leading) {
			t.Fatalf("record %d: RecordDecoder gives %v (%v), DecodeRecordWithin %v (%v)", k, got.Leading, err, want.Leading, werr)
		}
		if _, kept := got.Leading["s030"]; kept && c.b == b2 {
			t.Fatalf("record %d: s030 kept within bounds that do not run it", k)
		}
	}
	data := record(0, 100)
	if n := testing.AllocsPerRun(20, func() { _, _ = dec.Decode(data, b1) }); n > 100 {
		t.Errorf("decoding a record of 100 known ids: %.0f allocations, want them sharing the list's strings", n)
	}
}
