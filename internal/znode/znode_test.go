package znode

import (
	"math"
	"testing"
)

func TestSeqReadsZooKeepersSuffixes(t *testing.T) {
	for _, c := range []struct {
		name string
		seq  int32
		ok   bool
	}{
		{"_c_0f0e-latch-0000000042", 42, true},
		{"n_2147483647", math.MaxInt32, true},
		{"latch--2147483648", math.MinInt32, true},
		{"latch--000000001", -1, true},
		{"x-1500000000", 1500000000, true},
		{"member-a", 0, false},
		{"short", 0, false},
		{"n_-000000000", 0, false},
	} {
		if seq, ok := Seq(c.name); seq != c.seq || ok != c.ok {
			t.Errorf("Seq(%q) = %d, %v; want %d, %v", c.name, seq, ok, c.seq, c.ok)
		}
	}
}

func TestNameIsTheLastElement(t *testing.T) {
	for p, want := range map[string]string{"/a/b/c": "c", "/a": "a", "c": "c", "/": ""} {
		if got := Name(p); got != want {
			t.Errorf("Name(%q) = %q, want %q", p, got, want)
		}
	}
}
