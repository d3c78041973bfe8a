package jute

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// ErrMalformed is a reply body that does not decode exactly: truncated, or
// with bytes left over.
var ErrMalformed = errors.New("jute: malformed reply")

// StatLen is the encoded size of a Stat: czxid, mzxid, ctime, mtime (8
// each), version, cversion, aversion (4 each), ephemeralOwner (8),
// dataLength, numChildren (4 each), pzxid (8).
const StatLen = 4*8 + 3*4 + 8 + 2*4 + 8

// Decoder reads the fields of a reply body in order. The first field that
// does not fit leaves it failed; Err reports that, or bytes left over.
type Decoder struct {
	b   []byte
	bad bool
}

// NewDecoder decodes body (the reply after its header).
func NewDecoder(body []byte) *Decoder { return &Decoder{b: body} }

func (r *Decoder) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// Int32 reads a big-endian int32.
func (r *Decoder) Int32() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// Int64 reads a big-endian int64.
func (r *Decoder) Int64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Bool reads a one-byte boolean.
func (r *Decoder) Bool() bool {
	b := r.take(1)
	return b != nil && b[0] != 0
}

// Buffer reads a length-prefixed byte string; -1 is a null buffer (nil).
func (r *Decoder) Buffer() []byte {
	n := r.Int32()
	if n == -1 {
		return nil
	}
	return append([]byte{}, r.take(int(n))...)
}

// String reads a length-prefixed string.
func (r *Decoder) String() string { return string(r.take(int(r.Int32()))) }

// Strings reads a vector of strings; -1 is a null vector (nil).
func (r *Decoder) Strings() []string {
	n := r.Int32()
	if n == -1 || r.bad {
		return nil
	}
	if n < 0 || int(n) > len(r.b)/4 { // each string takes at least 4 bytes
		r.bad = true
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, r.String())
	}
	return out
}

// Stat reads a Stat.
func (r *Decoder) Stat() *zk.Stat {
	b := r.take(StatLen)
	if b == nil {
		return nil
	}
	return DecodeStat(b)
}

// Err reports a body that did not decode exactly (ErrMalformed).
func (r *Decoder) Err() error {
	if r.bad || len(r.b) != 0 {
		return fmt.Errorf("%w (%d bytes left)", ErrMalformed, len(r.b))
	}
	return nil
}

// DecodeStat decodes an encoded Stat of StatLen bytes.
func DecodeStat(s []byte) *zk.Stat {
	u64 := func(i int) int64 { return int64(binary.BigEndian.Uint64(s[i:])) }
	u32 := func(i int) int32 { return int32(binary.BigEndian.Uint32(s[i:])) }
	return &zk.Stat{
		Czxid: u64(0), Mzxid: u64(8), Ctime: u64(16), Mtime: u64(24),
		Version: u32(32), Cversion: u32(36), Aversion: u32(40),
		EphemeralOwner: u64(44), DataLength: u32(52), NumChildren: u32(56), Pzxid: u64(60),
	}
}

// DataReply decodes the body of a getData reply: data, Stat.
func DataReply(body []byte) ([]byte, *zk.Stat, error) {
	r := NewDecoder(body)
	data, st := r.Buffer(), r.Stat()
	return data, st, r.Err()
}

// ChildrenReply decodes the body of a getChildren2 reply: the children's
// names, Stat.
func ChildrenReply(body []byte) ([]string, *zk.Stat, error) {
	r := NewDecoder(body)
	names, st := r.Strings(), r.Stat()
	return names, st, r.Err()
}

// StatReply decodes the body of an exists or setData reply: Stat.
func StatReply(body []byte) (*zk.Stat, error) {
	r := NewDecoder(body)
	st := r.Stat()
	return st, r.Err()
}

// PathReply decodes the body of a create or sync reply: a path.
func PathReply(body []byte) (string, error) {
	r := NewDecoder(body)
	p := r.String()
	return p, r.Err()
}

// Create2Reply decodes the body of a create2 reply: the created path and
// its Stat.
func Create2Reply(body []byte) (string, *zk.Stat, error) {
	r := NewDecoder(body)
	p, st := r.String(), r.Stat()
	return p, st, r.Err()
}

// MultiResult is one operation's result in a multi reply.
type MultiResult struct {
	Type int32    // the op code, OpError when it failed
	Path string   // create's
	Stat *zk.Stat // setData's
	Err  Code     // OpError's
}

// MultiReply decodes the body of a multi reply: one result per
// operation, each behind its header, up to the closing header.
func MultiReply(body []byte) ([]MultiResult, error) {
	r := NewDecoder(body)
	var out []MultiResult
	for {
		t, done, code := r.Int32(), r.Bool(), r.Int32()
		if r.bad || done {
			break
		}
		res := MultiResult{Type: t}
		switch t {
		case OpError:
			res.Err = Code(r.Int32())
		case OpCreate:
			res.Path = r.String()
		case OpCreate2:
			res.Path, res.Stat = r.String(), r.Stat()
		case OpSetData:
			res.Stat = r.Stat()
		case OpDelete, OpCheck:
		default:
			return nil, fmt.Errorf("%w: multi result of type %d (code %d)", ErrMalformed, t, code)
		}
		out = append(out, res)
	}
	return out, r.Err()
}
