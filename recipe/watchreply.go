package recipe

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Requests and replies of the reads the session writes itself (GetW,
// ChildrenW, ExistsW, see watch.go; a candidate's watched getData, see
// datawatch.go; the observer's listing, see observer.go).

// Op codes and the watcher type of removeWatches not in frames.go.
const (
	opExists            = 3
	opGetChildren2      = 12
	watcherTypeChildren = 1
)

// errBodyNotKept means a reply's body was larger than the session keeps
// (maxCaptured): only its header arrived.
var errBodyNotKept = errors.New("reply body not kept")

// readFrame encodes a request made of a path and a watch flag (exists,
// getData, getChildren2) with its own xid.
func readFrame(op, xid int32, path string, watch bool) []byte {
	f := requestFrame(op, path, 1)
	binary.BigEndian.PutUint32(f[4:], uint32(xid))
	if watch {
		f[len(f)-1] = 1
	}
	return f
}

// removeChildWatchesFrame encodes removeWatches(path, child watches).
func removeChildWatchesFrame(path string) []byte {
	f := requestFrame(opRemoveWatches, path, 4)
	binary.BigEndian.PutUint32(f[len(f)-4:], watcherTypeChildren)
	return f
}

// replyBody checks the header of a reply to op: a ZooKeeper error code is
// mapped to go-zookeeper's error (replyError), a reply that is only a
// header means the session did not keep the body (errBodyNotKept), and a
// short one is an unknown outcome (zk.ErrConnectionClosed). Otherwise it
// returns the body after the header.
func replyBody(op string, b []byte) ([]byte, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("%s: short reply (%d bytes): %w", op, len(b), zk.ErrConnectionClosed)
	}
	if code := int32(binary.BigEndian.Uint32(b[12:])); code != 0 {
		return nil, replyError(op, code)
	}
	if len(b) == 16 {
		return nil, errBodyNotKept
	}
	return b[16:], nil
}

// juteReader decodes the fields of a reply body in order. The first field
// that does not fit leaves it failed; err reports that, or bytes left over.
type juteReader struct {
	b   []byte
	bad bool
}

func (r *juteReader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *juteReader) int32() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// buffer reads a length-prefixed byte string; -1 is a null buffer (nil).
func (r *juteReader) buffer() []byte {
	n := r.int32()
	if n == -1 {
		return nil
	}
	return append([]byte{}, r.take(int(n))...)
}

// strings reads a vector of strings; -1 is a null vector (nil).
func (r *juteReader) strings() []string {
	n := r.int32()
	if n == -1 || r.bad {
		return nil
	}
	if n < 0 || int(n) > len(r.b)/4 { // each string takes at least 4 bytes
		r.bad = true
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, string(r.take(int(r.int32()))))
	}
	return out
}

func (r *juteReader) stat() *zk.Stat {
	b := r.take(statLen)
	if b == nil {
		return nil
	}
	return decodeStat(b)
}

// err reports a body that did not decode exactly, as an unknown outcome.
func (r *juteReader) err(op string) error {
	if r.bad || len(r.b) != 0 {
		return fmt.Errorf("%s: malformed reply (%d bytes left): %w", op, len(r.b), zk.ErrConnectionClosed)
	}
	return nil
}

// decodeDataReply decodes the body of a getData reply: data, Stat.
func decodeDataReply(body []byte) ([]byte, *zk.Stat, error) {
	r := juteReader{b: body}
	data, st := r.buffer(), r.stat()
	return data, st, r.err("get data")
}

// decodeChildrenReply decodes the body of a getChildren2 reply: the
// children's names, Stat.
func decodeChildrenReply(body []byte) ([]string, *zk.Stat, error) {
	r := juteReader{b: body}
	names, st := r.strings(), r.stat()
	return names, st, r.err("list")
}

// decodeExistsReply decodes the body of an exists reply: Stat.
func decodeExistsReply(body []byte) (*zk.Stat, error) {
	r := juteReader{b: body}
	st := r.stat()
	return st, r.err("exists")
}
