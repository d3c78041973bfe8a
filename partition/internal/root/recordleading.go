package root

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// This file decodes a record's leading map (Record.Leading) without
// encoding/json for the form Encode writes: a record read by every other
// member after each of its writes holds thousands of entries (20,000 a
// member at 100,000 shards over 5), too costly for encoding/json's
// validation pass, reflection and map grown one entry at a time (the
// figures: bench/README.md, "Figures behind the code's choices"). Any
// other form (whitespace, escapes, non-ASCII ids, numbers that are not
// plain unsigned integers, fields in another order) goes to encoding/json,
// so the result is always the one encoding/json gives.

// leadingKey is what Encode writes before the leading map, after the
// session.
var leadingKey = []byte(`,"leading":`)

// decodeFast decodes a record whose JSON (data) starts as Encode writes
// it, {"session":<n>,"leading":{...},...: the leading map by hand, the
// rest (a few small fields) by encoding/json, keeping only the claims of
// shards b knows, and returns the leading ids kept in the order read.
// prev (ids known to b, in the order read) spares the bounds' lookup of
// the ids it lists. ok is false when data is in any other form.
func decodeFast(data []byte, b *Bounds, prev []string) (r Record, ids []string, ok bool) {
	const head = `{"session":`
	if !bytes.HasPrefix(data, []byte(head)) {
		return Record{}, nil, false
	}
	i := len(head)
	if i < len(data) && data[i] == '-' {
		i++
	}
	_, i, ok = parseToken(data, i)
	if !ok || !bytes.HasPrefix(data[i:], leadingKey) {
		return Record{}, nil, false
	}
	start := i + len(leadingKey)
	leading, ids, end, ok := parseLeading(data, start, b, prev)
	if !ok {
		return Record{}, nil, false
	}
	rest := make([]byte, 0, start+len(data)-end)
	rest = append(append(rest, data[:i]...), data[end:]...) // the record without its leading map
	if bytes.Contains(rest, []byte(`"leading"`)) {
		return Record{}, nil, false // a second leading key (encoding/json keeps the last), or a shard id: not Encode's form
	}
	if err := json.Unmarshal(rest, &r); err != nil {
		return Record{}, nil, false
	}
	r.Leading = leading
	r.dropUnknownLists(b) // the leading map holds known shards only: looking its ids up again cost a quarter of a decode
	return r, ids, true
}

// maxLeadingHint caps the entries a leading map is sized for before its
// entries are read; a larger map grows as entries are added.
const maxLeadingHint = 1 << 16

// parseLeading parses the object {"id":token,...} at data[i:] as
// json.Marshal writes it (no whitespace; ids of printable ASCII without
// quote or backslash; tokens of plain decimal digits that fit in 64
// bits), returning its entries of the shards b knows, their ids in the
// order read, and where it ends; ok is false for anything else. An id
// that prev (ids known to b, sorted when Encode wrote them) lists is
// taken from it without the bounds' lookup: both are in increasing order,
// so one pass over prev beside the keys finds them.
func parseLeading(data []byte, i int, b *Bounds, prev []string) (out map[string]uint64, ids []string, end int, ok bool) {
	if i >= len(data) || data[i] != '{' {
		return nil, nil, 0, false
	}
	i++
	if i < len(data) && data[i] == '}' {
		return map[string]uint64{}, nil, i + 1, true
	}
	// A size hint: every entry has a colon (ids might too); no more than
	// the shards b knows, nor than maxLeadingHint (a record of colons
	// must not size a map for a reader without a shard list).
	hint := min(bytes.Count(data[i:], []byte{':'}), maxLeadingHint)
	if b.known != nil {
		hint = min(hint, len(b.known))
	}
	out, ids = make(map[string]uint64, hint), make([]string, 0, hint)
	p := 0 // prev[:p] are below the keys read so far
	for {
		key, next, ok := parseKey(data, i)
		if !ok {
			return nil, nil, 0, false
		}
		tok, next, ok := parseToken(data, next)
		if !ok || next >= len(data) {
			return nil, nil, 0, false
		}
		for p < len(prev) && prev[p] < string(key) {
			p++
		}
		var id string
		var known bool
		if p < len(prev) && prev[p] == string(key) {
			id, known = prev[p], true
			p++
		} else {
			id, known = b.knownID(key)
		}
		if known {
			out[id] = tok
			ids = append(ids, id)
		}
		switch data[next] {
		case '}':
			return out, ids, next + 1, true
		case ',':
			i = next + 1
		default:
			return nil, nil, 0, false
		}
	}
}

// parseKey parses `"id":` at data[i:], returning the id (a slice of
// data) and where its token starts.
func parseKey(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			if j+1 >= len(data) || data[j+1] != ':' {
				return nil, 0, false
			}
			return data[i+1 : j], j + 2, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// parseToken parses an unsigned decimal integer at data[i:] (no sign, no
// leading zero, at most 2^64-1), returning it and where it ends.
func parseToken(data []byte, i int) (uint64, int, bool) {
	var v uint64
	j := i
	for ; j < len(data) && data[j] >= '0' && data[j] <= '9'; j++ {
		d := uint64(data[j] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, 0, false
		}
		v = v*10 + d
	}
	if j == i || (data[i] == '0' && j > i+1) {
		return 0, 0, false
	}
	return v, j, true
}

// marshalRecord returns json.Marshal(r), byte for byte, writing the
// leading map by hand: json.Marshal sorts a map's keys through
// reflection, several times slower for the thousands a record holds.
func marshalRecord(r Record) ([]byte, error) {
	leading := r.Leading
	r.Leading = nil
	rest, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	head := strconv.AppendInt([]byte(`{"session":`), r.Session, 10)
	head = append(head, `,"leading":null`...)
	if !bytes.HasPrefix(rest, head) {
		return nil, fmt.Errorf("encode member record: unexpected form %.40q", rest) // Record's first fields changed
	}
	if leading == nil {
		return rest, nil
	}
	out := make([]byte, 0, len(rest)+len(leading)*(16+20))
	out = append(out, head[:len(head)-len("null")]...)
	out, err = appendLeading(out, leading)
	if err != nil {
		return nil, err
	}
	return append(out, rest[len(head):]...), nil
}

// appendLeading appends the JSON object of leading as json.Marshal
// writes it: keys sorted, escaped as it escapes them.
func appendLeading(out []byte, leading map[string]uint64) ([]byte, error) {
	out = append(out, '{')
	for k, id := range slices.Sorted(maps.Keys(leading)) {
		if k > 0 {
			out = append(out, ',')
		}
		if plainKey(id) {
			out = append(append(append(out, '"'), id...), '"')
		} else {
			q, err := json.Marshal(id)
			if err != nil {
				return nil, fmt.Errorf("encode member record: %w", err)
			}
			out = append(out, q...)
		}
		out = strconv.AppendUint(append(out, ':'), leading[id], 10)
	}
	return append(out, '}'), nil
}

// plainKey reports whether json.Marshal writes id as it is between
// quotes: printable ASCII without a quote, a backslash or the characters
// it escapes for HTML (<, >, &).
func plainKey(id string) bool {
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
