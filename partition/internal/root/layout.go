// Package root is the data a partition group keeps under its root znode:
// the layout of the znodes (layout.go), the codecs of a member's record and
// of the operator state, shard and member ids, the bounds that keep every
// request and listing within ZooKeeper's jute.maxbuffer, and the observed
// state of a root (View) with the watchers that feed it (Watcher, Follow),
// a member's registration (Register), the writer of its record
// (Publisher) and the check of the root's ACLs (ACLChecker), which read and
// write ZooKeeper through a recipe.Session. It knows nothing of the
// member's loop or the Manager; packages partition and partition/operator
// read and write the root through it.
package root

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
)

// The root's children:
//
//	<root>/members/<member>           ephemeral, one per live member (its session)
//	<root>/owners/<member>            persistent, the member's Record
//	<root>/buckets                    persistent, its data the Layout; absent in a flat root
//	<root>/buckets/<bucket>/<shard>   persistent, the parent of the shard's election (bucketed)
//	<root>/shards/<shard>             persistent, the same in a flat root (releases before buckets);
//	                                  <root>/shards is empty in a bucketed root
//	<root>/operator                   persistent, the OperatorState (OperatorNode)
//
// The buckets have a directory of their own, not <root>/shards, so that a
// bucket's name never meets a flat election's (bucket "100" and shard
// "100"), and an election an older release makes in a bucketed root
// (under <root>/shards, which it reads) stands out.
const (
	// MembersDir holds one ephemeral znode per live member.
	MembersDir = "members"
	// OwnersDir holds one record per member (Record).
	OwnersDir = "owners"
	// ShardsDir holds one election parent per shard in a flat root.
	ShardsDir = "shards"
	// BucketsDir holds the buckets of a bucketed root, and its Layout.
	BucketsDir = "buckets"
)

// DefaultBuckets is the bucket count a new root is created with. At
// 1,000,000 ids of 32 bytes, 1,024 buckets hold 977 ids each on average
// and 1,059 in the fullest (FNV-1a of "shard-" and 26 digits,
// TestBoundAdmitsAMillionIDsOf32Bytes): its listing is 128 + 1,059 x
// (4 + 32) = 38,252 bytes, 3.6% of jute.maxbuffer (1,048,575), and the
// listing of <root>/buckets (1,024 names of 3 bytes) 128 + 1,024 x (4 + 3)
// = 7,296 bytes. A bucket holds up to (1,048,575 - 128) / 36 = 29,123 ids
// of 32 bytes, 27 times the fullest one's share at 1,000,000: a root of
// 1,024 buckets holds about 29,000,000 such ids before a listing is
// refused (see CheckListing).
const DefaultBuckets = 1024

// maxBuckets bounds the bucket count a root's data may name: the listing
// of <root>/buckets then stays under 400 KB.
const maxBuckets = 1 << 16

// Layout is how a root arranges its shards' elections: flat (no
// <root>/buckets, what releases before buckets wrote:
// <root>/shards/<shard>), or bucketed (<root>/buckets/<bucket>/<shard>,
// the bucket a stable hash of the shard id, so that no listing grows with
// the whole shard list), as the data of <root>/buckets records it. A
// root's layout is written once, in the transaction that creates
// <root>/shards, and changes only by a flat root's move to buckets
// (migration.go: flat, then FromFlat, then bucketed).
type Layout struct {
	// Buckets is the number of bucket znodes; 0 is the flat layout.
	Buckets int
	// FromFlat marks a flat root moving to buckets (migration.go): its
	// shards' elections are flat until each one's is gone, then bucketed.
	FromFlat bool
}

// Flat is the layout of a root written by a release before buckets.
var Flat = Layout{}

// NewRootLayout is the layout a root is created with.
var NewRootLayout = Layout{Buckets: DefaultBuckets}

// ErrUnknownLayout reports data of <root>/shards this release cannot read:
// a layout written by a later release, or a damaged znode.
var ErrUnknownLayout = errors.New("partition: unknown shard layout")

// layoutJSON is the data of a bucketed root's <root>/buckets.
type layoutJSON struct {
	Layout  string `json:"layout"`
	Buckets int    `json:"buckets"`
	From    string `json:"from,omitempty"` // "flat" while a flat root moves to buckets
}

// fromFlat is layoutJSON.From while a flat root moves to buckets.
const fromFlat = "flat"

const bucketedName = "buckets"

// Bucketed reports whether shards live in buckets.
func (l Layout) Bucketed() bool { return l.Buckets > 0 }

// Migrating reports whether a flat root is moving to buckets.
func (l Layout) Migrating() bool { return l.FromFlat }

// String names the layout for logs: "flat", "buckets=1024" or
// "buckets=1024 from flat".
func (l Layout) String() string {
	switch {
	case !l.Bucketed():
		return "flat"
	case l.FromFlat:
		return fmt.Sprintf("buckets=%d from flat", l.Buckets)
	}
	return fmt.Sprintf("buckets=%d", l.Buckets)
}

// Encode returns the data of <root>/buckets that records l: nil for flat
// (which has no <root>/buckets).
func (l Layout) Encode() []byte {
	if !l.Bucketed() {
		return nil
	}
	j := layoutJSON{Layout: bucketedName, Buckets: l.Buckets}
	if l.FromFlat {
		j.From = fromFlat
	}
	data, _ := json.Marshal(j)
	return data
}

// DecodeLayout reads the data of <root>/buckets. Anything that is not a
// bucket count of 1 to 65,536 (moving from flat, or not) is
// ErrUnknownLayout, empty data too, and so is a field this release does
// not know: a later release may record there a change under way, which
// this release would misread and campaign beside the leaders it does not
// see.
func DecodeLayout(data []byte) (Layout, error) {
	shown := string(data[:min(len(data), 100)])
	var j layoutJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Layout{}, fmt.Errorf("%w: %s: %v", ErrUnknownLayout, shown, err)
	}
	if j.Layout != bucketedName || j.Buckets < 1 || j.Buckets > maxBuckets || j.From != "" && j.From != fromFlat {
		return Layout{}, fmt.Errorf("%w: %s (this release reads {\"layout\":%q} with 1..%d buckets)", ErrUnknownLayout, shown, bucketedName, maxBuckets)
	}
	return Layout{Buckets: j.Buckets, FromFlat: j.From == fromFlat}, nil
}

// Bucket returns the name of shard id's bucket: FNV-1a (32 bits) of the
// id modulo the bucket count, in lower-case hex of a fixed width (3
// digits for 1,024 buckets). It is "" for the flat layout. The function
// is part of the znode layout and never changes.
func (l Layout) Bucket(id string) string {
	if !l.Bucketed() {
		return ""
	}
	return l.bucketName(l.bucketIndex(id))
}

// bucketName is the name of bucket i.
func (l Layout) bucketName(i int) string { return fmt.Sprintf("%0*x", l.bucketWidth(), i) }

// bucketIndex is the number of id's bucket, 0 to Buckets-1.
func (l Layout) bucketIndex(id string) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(l.Buckets))
}

// bucketWidth is the hex digits of the largest bucket, 0 for flat.
func (l Layout) bucketWidth() int {
	if !l.Bucketed() {
		return 0
	}
	return len(fmt.Sprintf("%x", l.Buckets-1))
}

// ShardsPath returns <root>/shards.
func ShardsPath(root string) string { return path.Join(root, ShardsDir) }

// BucketsPath returns <root>/buckets.
func BucketsPath(root string) string { return path.Join(root, BucketsDir) }

// dir returns the znode under which l lists its shards or buckets.
func (l Layout) dir(root string) string {
	if l.Bucketed() {
		return BucketsPath(root)
	}
	return ShardsPath(root)
}

// ShardPath returns the election path of shard id under root: every
// shard's path comes from here.
func (l Layout) ShardPath(root, id string) string {
	if !l.Bucketed() {
		return path.Join(root, ShardsDir, id)
	}
	return path.Join(root, BucketsDir, l.Bucket(id), id)
}

// isBucket reports whether name is one of l's bucket names.
func (l Layout) isBucket(name string) bool {
	if len(name) != l.bucketWidth() {
		return false
	}
	var n int
	if _, err := fmt.Sscanf(name, "%x", &n); err != nil {
		return false
	}
	return n >= 0 && n < l.Buckets && l.bucketName(n) == name
}
