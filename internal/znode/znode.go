// Package znode reads the names ZooKeeper gives znodes: a child's name in
// a path, and the sequence suffix of an ephemeral sequential znode; and it
// checks paths as ZooKeeper's PathUtils does (CheckPath, RefusedRune). It
// is the one place zkelect parses and checks them (the election orders candidates by
// that suffix, see recipe's naming.go; tools and benchmarks read it too).
package znode

import (
	"math"
	"strings"
)

// SeqDigits is the width ZooKeeper formats a sequence suffix to: a signed
// 32-bit counter printed like Java's "%010d" (0000000000 … 2147483647, then
// -2147483648 … -1000000000 with eleven characters, -999999999 …
// -000000001 with the sign counting towards the ten).
const SeqDigits = 10

// FirstSuffix is the sequence suffix ZooKeeper appends to the first
// sequential child of a znode (its cversion, 0, when the znode is new):
// a candidate created in the same transaction as its election knows its
// name before the reply.
const FirstSuffix = "0000000000"

// Name returns the last element of a znode path: a child's name ("c" for
// "/a/b/c", the path itself when it has no slash).
func Name(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

// Seq returns the sequence number ZooKeeper appended to name, and false for
// a name that does not end in one (not a sequential znode).
//
// A negative suffix of eleven characters ("-1000000000" and below) looks
// like a '-' separator followed by ten digits. The '-' is read as the sign
// when it starts the name or follows a character other than a letter or
// digit (Curator's "latch--2147483648"), or when the ten digits exceed the
// int32 range; otherwise it is read as a separator ("x-1500000000" is
// 1500000000). Every known naming convention ends its prefix in '-' or
// '_', for which this is exact.
func Seq(name string) (int32, bool) {
	if len(name) < SeqDigits {
		return 0, false
	}
	tail := name[len(name)-SeqDigits:]
	if tail[0] == '-' {
		v, ok := parseDigits(tail[1:])
		if !ok || v == 0 { // "%010d" never prints -0
			return 0, false
		}
		return int32(-v), true
	}
	v, ok := parseDigits(tail)
	if !ok {
		return 0, false
	}
	if signAt(name, len(name)-SeqDigits-1) && v >= 1_000_000_000 && v <= -math.MinInt32 {
		return int32(-v), true
	}
	if v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// signAt reports whether name[i] is a '-' that belongs to the number after
// it rather than to the prefix before it.
func signAt(name string, i int) bool {
	if i < 0 || name[i] != '-' {
		return false
	}
	if i == 0 || !isAlnum(name[i-1]) {
		return true
	}
	v, _ := parseDigits(name[i+1:])
	return v > math.MaxInt32
}

// parseDigits parses a string of ASCII digits only (no sign, no spaces).
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
