package zkconn

import "slices"

// sinkSet is the sinks one path's node events go to, and pathSet the
// paths routed to one sink: a few entries each (usually one: a candidate
// routes its own znode and its predecessor), so slices, where maps would
// cost a few hundred bytes a path on a session with thousands of
// elections. Both are used under the watch table's lock only.
type (
	sinkSet []Sink
	pathSet []string
)

// with returns the set with k added.
func (ss sinkSet) with(k Sink) sinkSet {
	if slices.Contains(ss, k) {
		return ss
	}
	return append(ss, k)
}

// without returns the set with k removed; it reuses the set's array, so a
// caller iterating over the set while sinks may leave iterates over a copy.
func (ss sinkSet) without(k Sink) sinkSet {
	if i := slices.Index(ss, k); i >= 0 {
		return slices.Delete(ss, i, i+1)
	}
	return ss
}

// with returns the set with p added.
func (ps pathSet) with(p string) pathSet {
	if slices.Contains(ps, p) {
		return ps
	}
	return append(ps, p)
}

// without returns the set with p removed.
func (ps pathSet) without(p string) pathSet {
	if i := slices.Index(ps, p); i >= 0 {
		return slices.Delete(ps, i, i+1)
	}
	return ps
}
