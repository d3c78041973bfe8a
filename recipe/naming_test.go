package recipe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const testGUID = "0f8fad5b-d9cb-469f-a165-70867728950e"

func TestNamingPrefix(t *testing.T) {
	tests := []struct {
		naming Naming
		want   string
	}{
		{CuratorNaming(), "_c_" + testGUID + "-latch-"},
		{Naming{}, "_c_" + testGUID + "-latch-"},
		{KazooNaming(), "0f8fad5bd9cb469fa16570867728950e__lock__"},
		{ShortNaming(), "_c_0f8fad5bd9cb469fa1657086-"},
	}
	for _, tt := range tests {
		t.Run(tt.naming.String(), func(t *testing.T) {
			got := tt.naming.Prefix(testGUID)
			if got != tt.want {
				t.Fatalf("Prefix = %q, want %q", got, tt.want)
			}
			name := got + "0000000042"
			if !ownsNode(name, testGUID) {
				t.Errorf("ownsNode(%q) = false for its own GUID", name)
			}
			if n, ok := parseNode(name); !ok || n.Seq != 42 {
				t.Errorf("parseNode(%q) = %+v, %v; want seq 42", name, n, ok)
			}
		})
	}
}

func TestNewGUIDIsFreshUUID(t *testing.T) {
	a, b := newGUID(), newGUID()
	if a == b {
		t.Fatalf("two GUIDs are equal: %s", a)
	}
	if len(a) != 36 || a[14] != '4' {
		t.Fatalf("GUID %q is not a version 4 UUID string", a)
	}
}

func TestOwnsNode(t *testing.T) {
	other := "9c858901-8a57-4791-81fe-4c455b099bc9"
	tests := []struct {
		name string
		guid string
		want bool
	}{
		{"_c_" + testGUID + "-latch-0000000001", testGUID, true},
		{"_c_" + testGUID + "-lock-0000000001", testGUID, true},
		{"0f8fad5bd9cb469fa16570867728950e__lock__0000000001", testGUID, true},
		{"_c_0f8fad5bd9cb469fa1657086-0000000001", testGUID, true},
		{"_c_0f8fad5bd9cb469fa1657086--000000001", testGUID, true},
		{"_c_9c8589018a57479181fe4c45-0000000001", testGUID, false},
		{"_c_" + other + "-latch-0000000001", testGUID, false},
		{"9c8589018a57479181fe4c455b099bc9__lock__0000000001", testGUID, false},
		{"x_c_" + testGUID + "-latch-0000000001", testGUID, false},
		{"n_0000000001", testGUID, false},
		{"_c_-latch-0000000001", "", false},
		{"__lock__0000000001", "", false},
	}
	for _, tt := range tests {
		if got := ownsNode(tt.name, tt.guid); got != tt.want {
			t.Errorf("ownsNode(%q, %q) = %v, want %v", tt.name, tt.guid, got, tt.want)
		}
	}
}

func TestParseNode(t *testing.T) {
	tests := []struct {
		name string
		seq  int32
		ok   bool
	}{
		{"_c_" + testGUID + "-latch-0000000000", 0, true},
		{"_c_" + testGUID + "-latch-0000000017", 17, true},
		{"_c_" + testGUID + "-latch-2147483647", math.MaxInt32, true},
		{"_c_" + testGUID + "-latch--2147483648", math.MinInt32, true},
		{"_c_" + testGUID + "-latch--1500000000", -1500000000, true},
		{"_c_" + testGUID + "-latch--1000000000", -1000000000, true},
		{"_c_" + testGUID + "-latch--999999999", -999999999, true},
		{"_c_" + testGUID + "-latch--000000001", -1, true},
		{"_c_" + testGUID + "-lock-0000000005", 5, true},
		{"_c_" + testGUID + "-lock--2147483648", math.MinInt32, true},
		{"0f8fad5bd9cb469fa16570867728950e__lock__0000000009", 9, true},
		{"0f8fad5bd9cb469fa16570867728950e__lock__-1500000000", -1500000000, true},
		{"0f8fad5bd9cb469fa16570867728950e__lock__-000000003", -3, true},
		{"n_0000000003", 3, true},
		{"n_-2147483647", -2147483647, true},
		{"x-0000000004", 4, true},
		{"x-1500000000", 1500000000, true}, // '-' after a letter is a separator
		{"x-2147483648", math.MinInt32, true},
		{"0000000007", 7, true},
		{"-2147483648", math.MinInt32, true},
		{"-1500000000", -1500000000, true},
		{"-000000012", -12, true},
		{"12345678901", 0, false}, // 2345678901 is out of int32 range
		{"x-9999999999", 0, false},
		{"n_-000000000", 0, false}, // "%010d" never prints -0
		{"n_000000001", 0, false},  // nine digits after a non-digit
		{"n_00000000x1", 0, false},
		{"n_0000 00001", 0, false},
		{"n_+000000001", 0, false},
		{"readme", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"----------", 0, false},
		{"latch-", 0, false},
	}
	for _, tt := range tests {
		n, ok := parseNode(tt.name)
		if ok != tt.ok || (ok && (n.Seq != tt.seq || n.Name != tt.name)) {
			t.Errorf("parseNode(%q) = %+v, %v; want seq %d, %v", tt.name, n, ok, tt.seq, tt.ok)
		}
	}
}

// zkSuffix formats a sequence as ZooKeeper does (Java's "%010d", which Go's
// fmt matches, sign included in the width).
func zkSuffix(seq int32) string { return fmt.Sprintf("%010d", seq) }

func TestZKSuffixFormat(t *testing.T) {
	for seq, want := range map[int32]string{
		0: "0000000000", 1: "0000000001", math.MaxInt32: "2147483647",
		math.MinInt32: "-2147483648", -1: "-000000001", -999999999: "-999999999",
		-1000000000: "-1000000000",
	} {
		if got := zkSuffix(seq); got != want {
			t.Errorf("zkSuffix(%d) = %q, want %q (ZooKeeper's format)", seq, got, want)
		}
	}
}

func nodesOf(seqs ...int32) []node {
	ns := make([]node, len(seqs))
	for i, s := range seqs {
		ns[i] = node{Name: "_c_g" + fmt.Sprint(i) + "-latch-" + zkSuffix(s), Seq: s}
	}
	return ns
}

func seqsOf(ns []node) []int32 {
	out := make([]int32, len(ns))
	for i, n := range ns {
		out[i] = n.Seq
	}
	return out
}

func TestSortNodes(t *testing.T) {
	tests := []struct {
		name string
		in   []int32
		want []int32
	}{
		{"empty", nil, []int32{}},
		{"one", []int32{5}, []int32{5}},
		{"plain", []int32{3, 1, 2, 10}, []int32{1, 2, 3, 10}},
		{"not by name: 10 after 9", []int32{10, 9}, []int32{9, 10}},
		{"across the wrap", []int32{math.MinInt32, math.MaxInt32, math.MinInt32 + 1, math.MaxInt32 - 1},
			[]int32{math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1}},
		{"counting up through -1 to 0", []int32{0, -1, -3, 2}, []int32{-3, -1, 0, 2}},
		{"serial, not signed", []int32{0, -1, math.MaxInt32 - 5, 3}, []int32{-1, 0, 3, math.MaxInt32 - 5}},
		{"negatives before zero", []int32{2, -3, -1000000000, 0}, []int32{-1000000000, -3, 0, 2}},
		{"span just under half", []int32{math.MaxInt32, 0}, []int32{0, math.MaxInt32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nodesOf(tt.in...)
			sortNodes(ns)
			if got := seqsOf(ns); !slices.Equal(got, tt.want) {
				t.Fatalf("sortNodes(%v) = %v, want %v", tt.in, got, tt.want)
			}
			if seqOrderAmbiguous(ns) {
				t.Fatalf("seqOrderAmbiguous(%v) = true for a span under 2^31", tt.in)
			}
		})
	}
}

func TestSortNodesTieBreaksByName(t *testing.T) {
	ns := []node{{Name: "b-0000000001", Seq: 1}, {Name: "a-0000000001", Seq: 1}, {Name: "c-0000000000", Seq: 0}}
	sortNodes(ns)
	want := []string{"c-0000000000", "a-0000000001", "b-0000000001"}
	for i, n := range ns {
		if n.Name != want[i] {
			t.Fatalf("order = %v, want names %v", ns, want)
		}
	}
}

func TestSortNodesMixedConventions(t *testing.T) {
	ns := []node{}
	for _, name := range []string{
		"x-0000000011",
		"_c_" + testGUID + "-latch-0000000012",
		"0f8fad5bd9cb469fa16570867728950e__lock__0000000002",
		"_c_" + testGUID + "-lock-0000000010",
		"n_0000000003",
	} {
		n, ok := parseNode(name)
		if !ok {
			t.Fatalf("parseNode(%q) failed", name)
		}
		ns = append(ns, n)
	}
	sortNodes(ns)
	if got, want := seqsOf(ns), []int32{2, 3, 10, 11, 12}; !slices.Equal(got, want) {
		t.Fatalf("mixed conventions sorted to %v, want %v (by suffix, never by name)", got, want)
	}
}

func TestSeqOrderAmbiguous(t *testing.T) {
	tests := []struct {
		in   []int32
		want bool
	}{
		{nil, false},
		{[]int32{7}, false},
		{[]int32{0, math.MaxInt32}, false},
		{[]int32{0, math.MinInt32}, true}, // exactly half the circle apart
		{[]int32{0, 1 << 30, math.MinInt32 + 1<<30}, true},
		{[]int32{math.MaxInt32, math.MinInt32}, false},
		{[]int32{-5, 5, 1 << 30}, false},
	}
	for _, tt := range tests {
		if got := seqOrderAmbiguous(nodesOf(tt.in...)); got != tt.want {
			t.Errorf("seqOrderAmbiguous(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestSortNodesByCzxid(t *testing.T) {
	ns := nodesOf(0, math.MinInt32, 1<<30, 5)
	czxid := map[string]int64{ns[0].Name: 300, ns[1].Name: 100, ns[2].Name: 200}
	sortNodesByCzxid(ns, czxid)
	if got, want := seqsOf(ns), []int32{math.MinInt32, 1 << 30, 0, 5}; !slices.Equal(got, want) {
		t.Fatalf("sortNodesByCzxid = %v, want %v (missing czxid last)", got, want)
	}
}

// TestSortNodesIsSerialOrder checks, on random sets that span less than
// 2^31 anywhere on the circle, that sortNodes agrees with serial-number
// arithmetic for every pair.
func TestSortNodesIsSerialOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		base := int32(r.Uint32())
		span := r.Uint32N(1<<31 - 1)
		seqs := make([]int32, 1+r.IntN(20))
		for i := range seqs {
			seqs[i] = int32(uint32(base) + r.Uint32N(span+1))
		}
		ns := nodesOf(seqs...)
		sortNodes(ns)
		for i := range ns {
			for j := i + 1; j < len(ns); j++ {
				if seqBefore(ns[j].Seq, ns[i].Seq) {
					t.Fatalf("base %d span %d: %d sorted before %d, but serially after", base, span, ns[i].Seq, ns[j].Seq)
				}
			}
		}
	}
}

// FuzzParseNode: parsing never panics; a parsed name ends in its sequence
// formatted as ZooKeeper does.
func FuzzParseNode(f *testing.F) {
	for _, s := range []string{
		"_c_" + testGUID + "-latch-0000000001", "_c_" + testGUID + "-latch--2147483648",
		"0f8fad5bd9cb469fa16570867728950e__lock__-000000001", "n_2147483647", "x-1500000000",
		"-1500000000", "12345678901", "", "----------", "n_-000000000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := parseNode(name)
		if !ok {
			return
		}
		if n.Name != name {
			t.Fatalf("parseNode(%q).Name = %q", name, n.Name)
		}
		if !strings.HasSuffix(name, zkSuffix(n.Seq)) {
			t.Fatalf("parseNode(%q).Seq = %d, but the name does not end in %q", name, n.Seq, zkSuffix(n.Seq))
		}
	})
}

// FuzzSuffixRoundTrip: a prefix plus ZooKeeper's rendering of a sequence
// parses back to that sequence, except in the two readings parseNode
// documents as ambiguous (prefixes no known convention uses).
func FuzzSuffixRoundTrip(f *testing.F) {
	for _, p := range []string{"_c_" + testGUID + "-latch-", "abc__lock__", "n_", "x-", ""} {
		for _, s := range []int32{0, 1, math.MaxInt32, math.MinInt32, -1, -1500000000, 1500000000} {
			f.Add(p, s)
		}
	}
	f.Fuzz(func(t *testing.T, prefix string, seq int32) {
		name := prefix + zkSuffix(seq)
		n, ok := parseNode(name)
		if !ok {
			t.Fatalf("parseNode(%q) failed", name)
		}
		if n.Seq != seq && !ambiguousRendering(prefix, seq) {
			t.Fatalf("parseNode(%q).Seq = %d, want %d", name, n.Seq, seq)
		}
	})
}

// ambiguousRendering reports the cases parseNode cannot read back: an
// eleven-character negative after a letter or digit, or a positive number
// of ten significant digits after a '-' that itself follows a non-alnum.
func ambiguousRendering(prefix string, seq int32) bool {
	if prefix == "" {
		return false
	}
	last := prefix[len(prefix)-1]
	if seq <= -1000000000 && seq != math.MinInt32 {
		return isAlnum(last)
	}
	if seq >= 1000000000 && last == '-' {
		return len(prefix) == 1 || !isAlnum(prefix[len(prefix)-2])
	}
	return false
}

// FuzzSortNodes: the order is a strict weak order that depends on the set
// only, and equals serial order whenever it is unambiguous.
func FuzzSortNodes(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 2})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0x80, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 0x80, 0, 0, 0, 0x40, 0, 0, 0, 0xc0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var seqs []int32
		for i := 0; i+4 <= len(data) && len(seqs) < 64; i += 4 {
			seqs = append(seqs, int32(uint32(data[i])<<24|uint32(data[i+1])<<16|uint32(data[i+2])<<8|uint32(data[i+3])))
		}
		ns := nodesOf(seqs...)
		rev := slices.Clone(ns)
		slices.Reverse(rev)
		sortNodes(ns)
		sortNodes(rev)
		if !slices.Equal(ns, rev) {
			t.Fatalf("order depends on input order: %v vs %v", seqsOf(ns), seqsOf(rev))
		}
		rank := make(map[string]int, len(ns))
		for i, n := range ns {
			rank[n.Name] = i
		}
		if len(rank) != len(ns) {
			t.Fatalf("duplicate names in %v", ns)
		}
		if seqOrderAmbiguous(ns) {
			return
		}
		for i := range ns {
			for j := i + 1; j < len(ns); j++ {
				if seqBefore(ns[j].Seq, ns[i].Seq) {
					t.Fatalf("%d sorted before %d but serially after, set %v", ns[i].Seq, ns[j].Seq, seqs)
				}
			}
		}
	})
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
