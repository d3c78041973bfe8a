package recipe

import (
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/zkelect/zkelect/internal/znode"
)

// This file names candidate znodes and orders them.
//
// A candidate creates "<election path>/<prefix>" as an ephemeral sequential
// znode; ZooKeeper appends the parent's child counter, a signed 32-bit number
// printed like Java's "%010d": 0000000000 … 2147483647, then -2147483648 …
// -1000000000 (eleven characters with the sign), -999999999 … -000000001 (the
// sign counts towards the width of ten).
//
// Election order is the order of those suffixes, never of the whole names, so
// candidates of every naming convention (Curator, kazoo, plain "n_") on one
// path agree. Across the counter's wrap the order uses serial-number
// arithmetic (RFC 1982 on 32 bits): a comes before b when
// int32(uint32(b)-uint32(a)) > 0. That is exact whenever the live sequences
// span less than half the circle (2^31 creates and deletes on the path
// between the oldest live candidate and the newest), so a newcomer whose
// suffix wrapped to a negative number still sorts after the sitting leader.
// When the live sequences span half the circle or more, suffixes cannot say
// which came first; seqOrderAmbiguous reports it, and the caller then orders
// by czxid (sortNodesByCzxid), the zxid of each create, which grows with
// creation order on every path for the lifetime of the ensemble.
//
// Curator 5.4 and kazoo 2.8 compare, as strings, the text after their own
// marker ("latch-", "__lock__"), or the whole name when it lacks the
// marker. Below the wrap they agree with this order on their own nodes; at
// the wrap they put "-2147483648" first; nodes of the other's convention
// they misplace.

// Naming says how candidate znodes are named. The zero value is
// CuratorNaming, the default.
type Naming struct {
	kind namingKind
}

type namingKind uint8

const (
	namingCurator namingKind = iota
	namingKazoo
	namingShort
)

const (
	// curatorProtected starts every protected-mode node name of Curator:
	// "_c_" + GUID + "-" precede the recipe's own name.
	curatorProtected = "_c_"
	// curatorLatch is the name Curator's LeaderLatch gives its nodes.
	curatorLatch = "latch-"
	// kazooLock is the name kazoo's Lock and Election give their nodes,
	// after a GUID written as 32 hex digits.
	kazooLock = "__lock__"
	// shortGUIDDigits is how many hex digits of the GUID ShortNaming keeps
	// (96 random bits).
	shortGUIDDigits = 24
)

// CuratorNaming names candidate znodes like Apache Curator's LeaderLatch,
// "_c_<guid>-latch-<seq>", so Go candidates and Curator participants share an
// election. It is the default.
func CuratorNaming() Naming { return Naming{kind: namingCurator} }

// KazooNaming names candidate znodes like the Python client kazoo's Election
// and Lock recipes, "<guid as 32 hex digits>__lock__<seq>".
func KazooNaming() Naming { return Naming{kind: namingKazoo} }

// ShortNaming names candidate znodes "_c_<24 hex digits of the guid>-<seq>",
// 38 bytes against CuratorNaming's 56: Curator's protected form without
// the recipe's name, with 96 of the GUID's random bits. Every znode path is
// in each request, watch and in the closeSession transaction of its
// session, so elections with many candidates per session (a partition
// member's shards) use it. zkelect orders it with every other naming (by
// the sequence suffix); Curator and kazoo compare names without their
// marker as whole strings and would misorder it, so use it only in
// elections that zkelect candidates alone join.
func ShortNaming() Naming { return Naming{kind: namingShort} }

// String returns "curator", "kazoo" or "short", for logs.
func (n Naming) String() string {
	switch n.kind {
	case namingKazoo:
		return "kazoo"
	case namingShort:
		return "short"
	}
	return "curator"
}

// Prefix returns the name, without sequence suffix, that a candidate with
// this GUID passes to an ephemeral sequential create.
func (n Naming) Prefix(guid string) string {
	switch n.kind {
	case namingKazoo:
		return compactGUID(guid) + kazooLock
	case namingShort:
		return curatorProtected + shortGUID(guid) + "-"
	}
	return curatorProtected + guid + "-" + curatorLatch
}

// newGUID returns a fresh candidate GUID: a random (version 4) UUID in its
// usual 36-character form, as Curator's protected mode uses.
func newGUID() string { return uuid.NewString() }

// compactGUID writes a GUID without its dashes, as kazoo does.
func compactGUID(guid string) string { return strings.ReplaceAll(guid, "-", "") }

// shortGUID is the GUID's first shortGUIDDigits hex digits (ShortNaming).
func shortGUID(guid string) string {
	c := compactGUID(guid)
	return c[:min(len(c), shortGUIDDigits)]
}

// ownsNode reports whether the child name carries the GUID, in Curator's
// protected form ("_c_<guid>-…", any recipe name), in kazoo's form
// ("<guid hex>__…") or in ShortNaming's ("_c_<24 hex digits>-…"). An empty
// GUID owns nothing.
func ownsNode(name, guid string) bool {
	if guid == "" {
		return false
	}
	return strings.HasPrefix(name, curatorProtected+guid+"-") ||
		strings.HasPrefix(name, compactGUID(guid)+"__") ||
		strings.HasPrefix(name, curatorProtected+shortGUID(guid)+"-")
}

// node is one child of an election path: its name and the sequence number
// ZooKeeper appended to it.
type node struct {
	Name string
	Seq  int32
}

// parseNode reads the sequence suffix ZooKeeper appended to a child's name
// (see znode.Seq). It reports false for a name that does not end in one
// (not a candidate).
func parseNode(name string) (node, bool) {
	seq, ok := znode.Seq(name)
	if !ok {
		return node{}, false
	}
	return node{Name: name, Seq: seq}, true
}

// parseNodes returns the candidate nodes among children.
func parseNodes(children []string) []node {
	ns := make([]node, 0, len(children))
	for _, ch := range children {
		if n, ok := parseNode(ch); ok {
			ns = append(ns, n)
		}
	}
	return ns
}

// electionOrder returns the candidate nodes in election order.
func electionOrder(children []string, czxid map[string]int64) []node {
	ns := parseNodes(children)
	if czxid != nil {
		sortNodesByCzxid(ns, czxid)
	} else {
		sortNodes(ns)
	}
	return ns
}

// seqBefore reports whether sequence a was issued before b in serial-number
// arithmetic; meaningful when the two are less than 2^31 apart.
func seqBefore(a, b int32) bool { return int32(uint32(b)-uint32(a)) > 0 }

// sortNodes puts ns in election order, lowest (the leader) first, by the
// sequence suffix alone; equal sequences (which ZooKeeper never issues on
// one path) are ordered by name.
//
// The order is the circle of 32-bit sequences cut at its widest gap: the
// node after the gap comes first. Whenever the sequences span less than 2^31
// this is exactly serial-number order (so correct across the wrap), and for
// any set it is a total order that depends on the set alone, not on the
// order ns arrived in: every observer of the same children agrees.
func sortNodes(ns []node) {
	start := circleStart(ns)
	slices.SortFunc(ns, func(a, b node) int {
		ka, kb := uint32(a.Seq)-start, uint32(b.Seq)-start
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// circleStart returns the sequence (as uint32) that follows the widest gap
// between the sequences of ns on the 2^32 circle; ties go to the smallest.
func circleStart(ns []node) uint32 {
	if len(ns) == 0 {
		return 0
	}
	vs := sortedSeqs(ns)
	start := vs[0]
	widest := uint64(vs[0]) + 1<<32 - uint64(vs[len(vs)-1]) // the gap through the wrap
	for i := 1; i < len(vs); i++ {
		if gap := uint64(vs[i] - vs[i-1]); gap > widest {
			start, widest = vs[i], gap
		}
	}
	return start
}

// sortedSeqs returns the sequences of ns as unsigned numbers, ascending.
func sortedSeqs(ns []node) []uint32 {
	vs := make([]uint32, len(ns))
	for i, n := range ns {
		vs[i] = uint32(n.Seq)
	}
	slices.Sort(vs)
	return vs
}

// seqOrderAmbiguous reports whether the sequences of ns span half the 2^32
// circle or more, so their suffixes cannot tell which was created first. The
// caller should then read each node's czxid and use sortNodesByCzxid.
func seqOrderAmbiguous(ns []node) bool {
	if len(ns) < 2 {
		return false
	}
	vs := sortedSeqs(ns)
	widest := uint64(vs[0]) + 1<<32 - uint64(vs[len(vs)-1])
	for i := 1; i < len(vs); i++ {
		widest = max(widest, uint64(vs[i]-vs[i-1]))
	}
	return widest <= 1<<31
}

// sortNodesByCzxid puts ns in creation order, by the czxid of each node
// (czxid maps a child's name to it); nodes missing from the map (vanished
// since the listing) sort last, and ties are broken by name.
func sortNodesByCzxid(ns []node, czxid map[string]int64) {
	key := func(n node) (int64, bool) {
		z, ok := czxid[n.Name]
		return z, ok
	}
	slices.SortFunc(ns, func(a, b node) int {
		za, oka := key(a)
		zb, okb := key(b)
		switch {
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case za != zb:
			if za < zb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}
