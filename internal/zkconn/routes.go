package zkconn

import "slices"

// smallSet is a set of a few entries: a slice, where a map would cost a
// few hundred bytes. The watch table routes a path's node events to a
// sinkSet and remembers a sink's paths in a pathSet, usually one entry
// each (a candidate routes its own znode and its predecessor), on a
// session with thousands of elections. Used under the table's lock only.
type smallSet[T comparable] []T

type (
	sinkSet = smallSet[Sink]
	pathSet = smallSet[string]
)

// with returns the set with v added.
func (s smallSet[T]) with(v T) smallSet[T] {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// without returns the set with v removed; it reuses the set's array, so a
// caller iterating over the set while entries may leave iterates over a
// copy.
func (s smallSet[T]) without(v T) smallSet[T] {
	if i := slices.Index(s, v); i >= 0 {
		return slices.Delete(s, i, i+1)
	}
	return s
}
