package root

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// This file bounds what a reader takes from a root: the records under
// <root>/owners, the operator state and the znodes under <root>/members
// are anyone's who holds the group's credentials (anyone's on an open
// root), and a reader decodes and keeps what it reads. The bounds follow
// from the shard list the reader runs (a member's Config.Shards); a
// reader without one (status, WatchLeaders, WatchCluster) takes fixed
// ones.
//
// A record. A member lists each shard it runs at most twice (led or
// reserved, and unavailable); a reader allows twice that again, for a
// member running a longer list than its own (a rollout that adds
// shards), and 1,024 claims more for small lists: claims =
// 4 x shards + 1,024. A claim takes at most the id plus claimBytes of
// JSON ("<id>":<token of up to 20 digits>,). The rest of a record
// (session, shard-set digest, an address of up to MaxAddress bytes, up to
// MaxLabels labels, weight, flags) takes at most recordFixedBytes, JSON
// escapes included. So a record decompresses to at most
//
//	recordFixedBytes + claims x (longest id + claimBytes)
//
// bytes: 131,072 + (4 x 64 + 1,024) x (2 + 24) = 164,352 bytes for the
// daemon's 64 shards "0".."63"; 131,072 + 401,024 x 30 = 12,161,792
// bytes at 100,000 ids of up to 6 bytes (a member at that size writes
// about 600 KB a record). Stored, compressed or not, it takes at most the
// smaller of that and maxRecordBytes (what Encode writes). A reader
// without a shard list takes records of up to outsideRecordBytes
// decompressed. A larger record is refused whole (as an unreadable one:
// its member claims nothing) with a *BoundError that gives this
// arithmetic; the gzip stream is read no further than the bound. A
// record's claims of shards the reader does not run are dropped as it is
// decoded, so they take no memory and never reach its view.
//
// Members and records. A reader counts at most Members() live members
// and watches at most as many records: twice its shard count, at least
// minMembersBound and at most maxMembersBound (maxMembersBound without a
// shard list). Beyond it the members with the newest znodes (largest
// czxid) are left out, and the records of members that are not live
// before those of live ones, after the reader's own; the reader logs one
// line while the count stays over (again when it changes, at most once a
// minute) and reports it to its metric.
//
// The operator state is read up to maxRecordBytes (what Operator writes).
const (
	// recordFixedBytes bounds a record's JSON apart from its claims.
	recordFixedBytes = 128 << 10
	// claimBytes is a claim's JSON apart from its id.
	claimBytes = 24
	// claimsPerShard and claimsSlack give the claims a record may hold:
	// claimsPerShard x shards + claimsSlack.
	claimsPerShard = 4
	claimsSlack    = 1024
	// outsideRecordBytes bounds a decompressed record for a reader without
	// a shard list: a record within maxRecordBytes of gzip, of the largest
	// lists a root holds, decompresses to about 10 MB.
	outsideRecordBytes = 16 << 20
	// minMembersBound and maxMembersBound clamp the members a reader counts
	// and the records it watches (twice its shard count).
	minMembersBound = 256
	maxMembersBound = 4096
)

// Bounds is what a reader of a root accepts: derived from the shard ids
// it runs (NewBounds) or, for a reader without a list, fixed
// (OutsideBounds). A Bounds is immutable and safe for concurrent use.
type Bounds struct {
	known   map[string]int32 // the ids the reader runs, to their index in ids; nil: no list, every claim kept
	ids     []string         // a copy of the list they come from
	longest int              // bytes of the longest of them
	retired chan struct{}    // closed by Retire
	once    sync.Once
}

// NewBounds returns the bounds of a reader that runs ids (copied: the
// records it decodes share their strings).
func NewBounds(ids []string) *Bounds {
	ids = slices.Clone(ids)
	b := &Bounds{known: make(map[string]int32, len(ids)), ids: ids, retired: make(chan struct{})}
	for i, id := range ids {
		b.known[id] = int32(i)
		b.longest = max(b.longest, len(id))
	}
	return b
}

// OutsideBounds returns the bounds of a reader that runs no shard list:
// every claim is kept, records are read up to 16 MiB decompressed.
func OutsideBounds() *Bounds { return &Bounds{retired: make(chan struct{})} }

// Retire marks b replaced (the reader's shard list changed): watchers read
// the records they read within b again, within the new bounds, so that
// claims of a shard added are seen. Idempotent.
func (b *Bounds) Retire() { b.once.Do(func() { close(b.retired) }) }

// Retired returns a channel closed once b is retired.
func (b *Bounds) Retired() <-chan struct{} { return b.retired }

// Knows reports whether the reader runs shard id (always, without a list).
func (b *Bounds) Knows(id string) bool {
	if b.known == nil {
		return true
	}
	_, ok := b.known[id]
	return ok
}

// knownID returns id (bytes) as a string, and whether the reader runs it:
// the reader's own string for the id, so that the records decoded share
// the shard list's strings (no allocation a claim), or a new string
// without a list.
func (b *Bounds) knownID(id []byte) (string, bool) {
	if b.known == nil {
		return string(id), true
	}
	i, ok := b.known[string(id)]
	if !ok {
		return "", false
	}
	return b.ids[i], true
}

// Shards returns how many shard ids the reader runs (0 without a list).
func (b *Bounds) Shards() int { return len(b.known) }

// claims returns how many claims a record may hold.
func (b *Bounds) claims() int { return claimsPerShard*len(b.known) + claimsSlack }

// RecordBytes returns the most bytes a record may decompress to.
func (b *Bounds) RecordBytes() int {
	if b.known == nil {
		return outsideRecordBytes
	}
	return recordFixedBytes + b.claims()*(b.longest+claimBytes)
}

// StoredRecordBytes returns the most bytes a record's znode may hold.
func (b *Bounds) StoredRecordBytes() int { return min(maxRecordBytes, b.RecordBytes()) }

// Members returns how many live members the reader counts, and how many
// records it watches, at most.
func (b *Bounds) Members() int {
	if b.known == nil {
		return maxMembersBound
	}
	return min(max(2*len(b.known), minMembersBound), maxMembersBound)
}

// recordArithmetic says how RecordBytes follows from the shard list.
func (b *Bounds) recordArithmetic() string {
	if b.known == nil {
		return fmt.Sprintf("a reader without a shard list takes at most %d bytes", outsideRecordBytes)
	}
	return fmt.Sprintf("%d = %d + (%d x %d shards + %d) claims x (%d bytes of the longest id + %d)",
		b.RecordBytes(), recordFixedBytes, claimsPerShard, len(b.known), claimsSlack, b.longest, claimBytes)
}

// BoundError reports a znode of a root refused by its reader for its
// size: more bytes than the reader's Bounds take. It matches ErrOverBound
// with errors.Is.
type BoundError struct {
	What   string // "member record" or "operator state"
	Bytes  int    // the size read, in bytes (at least this many: reading stops past Max)
	Max    int    // the bound, in bytes
	Stored bool   // Bytes is the znode's size, as stored (else decompressed)
	Reason string // the bound's arithmetic
}

// Error implements error.
func (e *BoundError) Error() string {
	form := "decompressed to more than"
	if e.Stored {
		form = "stored in"
	}
	return fmt.Sprintf("partition: %s %s %s bytes refused: the bound is %s bytes (%s)",
		e.What, form, strconv.Itoa(e.Bytes), strconv.Itoa(e.Max), e.Reason)
}

// Is reports whether target is ErrOverBound.
func (e *BoundError) Is(target error) bool { return target == ErrOverBound }
