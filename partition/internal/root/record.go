package root

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
)

// This file encodes a member's record, the data of <root>/owners/<member>.

const (
	// compressAbove is the JSON size above which a record is gzipped:
	// thousands of similar shard ids shrink several times.
	compressAbove = 16 << 10
	// maxRecordBytes keeps a record write under ZooKeeper's default 1 MB
	// request limit (jute.maxbuffer) with room for the request's header.
	maxRecordBytes = 1000 << 10
	// maxRecordPlain bounds a decompressed record.
	maxRecordPlain = 64 << 20
)

// gzipMagic starts every gzip stream; JSON never starts with it.
var gzipMagic = []byte{0x1f, 0x8b}

// ErrRecordTooLarge reports a record that cannot be written: the member
// leads too many shards with too long ids. Other members then see an older
// record; balance suffers, safety does not.
var ErrRecordTooLarge = errors.New("partition: member record over ZooKeeper's request limit")

// Record is the data of <root>/owners/<member>.
type Record struct {
	// Session is the id of the session that wrote the record.
	Session int64 `json:"session"`
	// Leading maps the shards the member led when it wrote the record to
	// their fencing tokens: when two records claim a shard (one of them is
	// stale), the larger token is the later leader.
	Leading map[string]uint64 `json:"leading"`
	// Reserved lists the shards an earlier session of the member led that
	// this session has not led yet.
	Reserved []string `json:"reserved,omitempty"`
	// Unavailable lists shards the member cannot lead now (the sibling
	// session their elections sit on is down): every member's assignment
	// deals them to another member. Members of earlier releases ignore
	// the field: to them the shards are neither led nor reserved by the
	// member, as they are.
	Unavailable []string `json:"unavailable,omitempty"`
	// ShardSet is the digest of the member's shard list (assign.ListDigest):
	// shards are dealt only among members that run the same list.
	// Empty in records of earlier releases: taken as the same list.
	ShardSet string `json:"shard_set,omitempty"`
	// Address is where the member serves its shards' requests
	// (Config.Address), for routers. Empty in records of earlier releases.
	Address string `json:"address,omitempty"`
	// Labels are the member's free-form labels (Config.Labels).
	Labels map[string]string `json:"labels,omitempty"`
	// Weight is the member's weight (Config.Weight); 0 in records of
	// earlier releases, taken as 1.
	Weight int `json:"weight,omitempty"`
	// Buckets is true in records of releases that read the root's layout
	// (<root>/buckets): a member that does not say so campaigns in
	// <root>/shards whatever the layout, so a bucketed root's members deal
	// it no shard (its campaigns there fail: shardslock.go). Absent
	// (false) in records of releases before buckets, which ignore it.
	Buckets bool `json:"buckets,omitempty"`
	// Migrate is true in records of releases that take part in moving a
	// flat root to buckets (migration.go): the operator's verb refuses to
	// start the move while a live member's record does not say so.
	Migrate bool `json:"migrate,omitempty"`
}

// DecodeRecord parses a record, gzipped or not, within the bounds of a
// reader without a shard list (DecodeRecordWithin, OutsideBounds); an
// empty znode is an empty record.
func DecodeRecord(data []byte) (Record, error) { return DecodeRecordWithin(data, OutsideBounds()) }

// DecodeRecordWithin parses a record, gzipped or not, as a reader with
// bounds b takes it: a znode over b.StoredRecordBytes() or decompressing
// to more than b.RecordBytes() is refused with a *BoundError (the gzip
// stream is read no further than the bound); claims of shards b does not
// know are dropped; an address or labels that fail ValidateAddress or
// ValidateLabels are dropped. An empty znode is an empty record.
func DecodeRecordWithin(data []byte, b *Bounds) (Record, error) {
	var d RecordDecoder
	return d.Decode(data, b)
}

// RecordDecoder decodes one member's successive records: the ids of the
// record it decoded before (in the order read: sorted, as Encode writes
// them) stand for the bounds' lookup of the same ids in the next, within
// the same bounds. A member whose record renews one leadership writes the
// same ids again; looking 10,000 of them up in the bounds of a
// 1,000,000-shard list cost three quarters of a decode. The zero value is
// ready; one goroutine uses a RecordDecoder.
type RecordDecoder struct {
	b    *Bounds  // the bounds prev was decoded within
	prev []string // the leading ids of the record decoded before, known to b
}

// Decode is DecodeRecordWithin for the decoder's member's next record.
func (d *RecordDecoder) Decode(data []byte, b *Bounds) (Record, error) {
	if d.b != b {
		d.b, d.prev = b, nil // ids known to other bounds prove nothing
	}
	r, err := d.decode(data, b)
	if err != nil {
		d.prev = nil
	}
	return r, err
}

func (d *RecordDecoder) decode(data []byte, b *Bounds) (Record, error) {
	var r Record
	if len(data) == 0 {
		return r, nil
	}
	plain := b.RecordBytes()
	if gz := bytes.HasPrefix(data, gzipMagic); len(data) > b.StoredRecordBytes() || (!gz && len(data) > plain) {
		return Record{}, &BoundError{What: "member record", Bytes: len(data), Max: b.StoredRecordBytes(), Stored: true,
			Reason: fmt.Sprintf("the smaller of what a member writes (%d) and the decompressed bound %s", maxRecordBytes, b.recordArithmetic())}
	} else if gz {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return Record{}, fmt.Errorf("decode member record: %w", err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, int64(plain)+1)); err != nil {
			return Record{}, fmt.Errorf("decode member record: %w", err)
		}
		if len(data) > plain {
			return Record{}, &BoundError{What: "member record", Bytes: plain, Max: plain, Reason: b.recordArithmetic()}
		}
	}
	r, ids, ok := decodeFast(data, b, d.prev) // the form Encode writes (recordleading.go)
	d.prev = ids
	if !ok {
		if err := json.Unmarshal(data, &r); err != nil {
			return Record{}, fmt.Errorf("decode member record: %w", err)
		}
		r.dropUnknown(b)
	}
	r.dropBadMeta()
	return r, nil
}

// dropUnknown drops r's claims of shards b does not know.
func (r *Record) dropUnknown(b *Bounds) {
	if b.known == nil {
		return
	}
	maps.DeleteFunc(r.Leading, func(s string, _ uint64) bool { return !b.Knows(s) })
	r.dropUnknownLists(b)
}

// dropUnknownLists drops the shards b does not know from r's lists
// (Reserved, Unavailable), not from its leading map: for a leading map
// already decoded within b.
func (r *Record) dropUnknownLists(b *Bounds) {
	if b.known == nil {
		return
	}
	r.Reserved = slices.DeleteFunc(r.Reserved, func(s string) bool { return !b.Knows(s) })
	r.Unavailable = slices.DeleteFunc(r.Unavailable, func(s string) bool { return !b.Knows(s) })
}

// Encode returns the record's znode data: JSON, gzipped when larger than
// compressAbove. It fails with ErrRecordTooLarge beyond maxRecordBytes
// (ZooKeeper drops the connection of a client sending a larger request).
func (r Record) Encode() ([]byte, error) {
	data, err := marshalRecord(r) // json.Marshal(r), faster (recordleading.go)
	if err != nil {
		return nil, fmt.Errorf("encode member record: %w", err)
	}
	if len(data) > compressAbove {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // a valid level cannot fail
		_, _ = zw.Write(data)                              // writes to a bytes.Buffer cannot fail
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("compress member record: %w", err)
		}
		data = buf.Bytes()
	}
	if len(data) > maxRecordBytes {
		return nil, fmt.Errorf("%w: %d bytes for %d shards", ErrRecordTooLarge, len(data), len(r.Leading)+len(r.Reserved))
	}
	return data, nil
}
