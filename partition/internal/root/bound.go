package root

import (
	"fmt"
	"path"
)

// This file bounds what one ZooKeeper session owns and what one listing
// returns, from ZooKeeper's own limits.
//
// When a session ends (expiry, Close, a crashed member), the ensemble's
// leader writes one closeSession transaction that lists the path of every
// ephemeral znode the session owned, and every server must read it back:
// from its peers while it is replicated and from its transaction log when
// it restarts. Servers refuse a record longer than jute.maxbuffer plus
// zookeeper.jute.maxbuffer.extrasize (1 MiB + 1 MiB by default) with
// "Unreasonable length": a session owning more than about 20,000
// ephemerals of 100-byte paths leaves servers unable to load their
// database and lets the expired session's znodes survive on the others
// (ZOOKEEPER-4306). A member therefore spreads its elections over several
// sessions of its own, at most MaxShardsPerSession elections on each.
//
// The arithmetic. The transaction takes 4 bytes (a length) plus the path
// per ephemeral, and closeSessionOverhead bytes in all for its header and
// framing (3,090,084 bytes measured for 30,000 paths of 99 bytes: 30,000 x
// 103 + 84). An election's path is
//
//	<root>/buckets/<bucket>/<id>/_c_<24 hex digits>-<10-digit sequence>
//
// that is len(root) + 9 + len(bucket) + 1 + len(id) + 1 + 38 bytes, or
// len(root) + 8 + len(id) + 1 + 38 in a flat root, <root>/shards/<id>
// (recipe.ShortNaming:
// Curator LeaderLatch's "_c_<36-character GUID>-latch-<seq>", which
// earlier releases used, takes 56). With the daemon's root "/zkelect" and
// ids of up to 6 characters a path is 66 bytes (61 flat), so 70 bytes an
// election, and DefaultMaxShardsPerSession = 5,000 elections write at most
// 5,000 x 70 + 84 = 350,084 bytes (325,084 flat): 33% of jute.maxbuffer
// (1,048,575) and 17% of what the servers read back. The
// bound the Manager enforces is jute.maxbuffer itself (half what the
// servers read back): the default is 5,000 or, with longer paths, the
// most elections whose transaction stays within jute.maxbuffer; a
// MaxShardsPerSession set above that is refused. The primary session also
// owns the member's znode (<root>/members/<id>), counted in.
//
// Listings. zkelect status, Owners, prune and a member's start list the
// shards' elections (ListShards): in a bucketed root one getChildren of
// <root>/buckets (the bucket names) and one of each bucket, in a flat root
// one getChildren of <root>/shards with every id. A reply is 4 bytes plus
// 4 + len(name) per child plus listingOverhead bytes (reply header and
// stat). The Java client, and so zkCli and Curator-based tools, refuse a
// reply above jute.maxbuffer ("Packet len is out of range"), so a shard
// list whose fullest listing would exceed jute.maxbuffer is refused
// (CheckListing). Flat: 100,000 decimal ids (Range(0, 100000)) list in
// 889,018 bytes and are accepted; 100,000 ids of 7 characters or more are
// not. Bucketed (DefaultBuckets, 1,024): 1,000,000 ids of 32 characters
// list in at most 38,252 bytes a bucket (see DefaultBuckets).

const (
	// DefaultJuteMaxBuffer is ZooKeeper's default jute.maxbuffer, in
	// bytes (0xfffff): the largest request or znode a server accepts, and
	// the largest reply a Java client reads.
	DefaultJuteMaxBuffer = 0xfffff
	// DefaultMaxShardsPerSession is how many shard elections one session
	// carries at most, by default (see the arithmetic above).
	DefaultMaxShardsPerSession = 5000
	// closeSessionOverhead is the closeSession transaction's size apart
	// from its paths, in bytes.
	closeSessionOverhead = 84
	// candidateNameBytes is the length of a shard candidate's znode name,
	// "_c_<24 hex digits>-<10-digit sequence>" (recipe.ShortNaming).
	candidateNameBytes = 3 + 24 + 1 + 10
	// listingOverhead is a getChildren2 reply's size apart from its
	// names: reply header (16), stat (68), count (4), rounded up.
	listingOverhead = 128
)

// ElectionPathBytes returns the length of the longest candidate znode path
// of a shard among ids under root in layout l.
func (l Layout) ElectionPathBytes(root string, ids []string) int {
	longest := 0
	for _, id := range ids {
		longest = max(longest, len(id))
	}
	n := len(l.dir(root)) + 1 + longest + 1 + candidateNameBytes
	if l.Bucketed() {
		n += l.bucketWidth() + 1
	}
	return n
}

// CloseSessionBytes returns the size, in bytes, of the closeSession
// transaction of a session that owns the given number of ephemeral znodes
// whose paths are pathBytes long (see MaxShardsPerSession). Compare it
// with the servers' jute.maxbuffer.
func CloseSessionBytes(ephemerals, pathBytes int) int {
	return closeSessionOverhead + ephemerals*(4+pathBytes)
}

// ListingBytes returns the size, in bytes, of the getChildren reply that
// lists ids (as zkelect status, Owners and WatchLeaders list
// <root>/shards). Compare it with the clients' jute.maxbuffer.
func ListingBytes(ids []string) int {
	n := listingOverhead
	for _, id := range ids {
		n += 4 + len(id)
	}
	return n
}

// SessionCap returns how many shard elections one session may carry for
// ids under root in layout l: perSession, or when it is zero the default (5,000, less
// with paths too long for that). It fails with a *LimitError when
// perSession ephemerals (elections, or the member's znode and one fewer
// election on the primary session) would write a closeSession transaction
// over juteMax bytes.
func (l Layout) SessionCap(root, member string, ids []string, perSession, juteMax int) (int, error) {
	p := max(l.ElectionPathBytes(root, ids), len(path.Join(root, MembersDir, member)))
	fit := (juteMax - closeSessionOverhead) / (4 + p) // ephemerals, the member znode one of them
	if perSession == 0 {
		perSession = min(DefaultMaxShardsPerSession, fit)
	}
	if perSession > fit || fit < 1 {
		return 0, &LimitError{
			Limit: "closeSession", Bytes: CloseSessionBytes(perSession, p), Max: juteMax,
			Reason: fmt.Sprintf("%d elections a session with paths of %d bytes; at most %d fit", perSession, p, fit),
		}
	}
	return perSession, nil
}

// CheckListing fails with a *LimitError when a listing of the shards of
// ids in layout l would be larger than juteMax bytes: in a flat root the
// listing of all ids, in a bucketed one that of the fullest bucket or of
// the bucket names. The error's Reason states the arithmetic.
func (l Layout) CheckListing(ids []string, juteMax int) error {
	if !l.Bucketed() {
		if n := ListingBytes(ids); n > juteMax {
			return &LimitError{
				Limit: "getChildren", Bytes: n, Max: juteMax,
				Reason: fmt.Sprintf("listing %d shard ids of <root>/shards (flat: one listing) takes %d + the sum of 4 + len(id), %d bytes in ids; use fewer or shorter ids, or a new root (bucketed)",
					len(ids), listingOverhead, n-listingOverhead),
			}
		}
		return nil
	}
	names := make([]string, l.Buckets)
	for i := range names {
		names[i] = l.bucketName(i)
	}
	if n := ListingBytes(names); n > juteMax {
		return &LimitError{Limit: "getChildren", Bytes: n, Max: juteMax,
			Reason: fmt.Sprintf("listing %d buckets of <root>/buckets: %d + %d x (4 + %d)", l.Buckets, listingOverhead, l.Buckets, l.bucketWidth())}
	}
	bytes, count, longest := make([]int, l.Buckets), make([]int, l.Buckets), make([]int, l.Buckets)
	full := 0
	for _, id := range ids {
		b := l.bucketIndex(id)
		bytes[b] += 4 + len(id)
		count[b]++
		longest[b] = max(longest[b], len(id))
		if bytes[b] > bytes[full] {
			full = b
		}
	}
	if n := listingOverhead + bytes[full]; len(ids) > 0 && n > juteMax {
		return &LimitError{Limit: "getChildren", Bytes: n, Max: juteMax,
			Reason: fmt.Sprintf("%d shard ids over %d buckets, the fullest (%0*x) with %d ids of up to %d bytes: %d + the sum of 4 + len(id) is over %d; a bucket holds about (%d - %d) / (4 + %d) = %d such ids, the root about %d; use fewer or shorter ids",
				len(ids), l.Buckets, l.bucketWidth(), full, count[full], longest[full], listingOverhead, juteMax,
				juteMax, listingOverhead, longest[full], (juteMax-listingOverhead)/(4+longest[full]), l.Buckets*((juteMax-listingOverhead)/(4+longest[full]))),
		}
	}
	return nil
}
