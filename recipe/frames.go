package recipe

import "encoding/binary"

// Encoding and decoding of the few ZooKeeper frames the session reads or
// writes itself (see wire.go).

// connectRequestLen is the length of go-zookeeper's connect request body:
// protocol version, last zxid, timeout, session id, password (4+16 bytes).
const connectRequestLen = 4 + 8 + 4 + 8 + 4 + 16

// Requests the session writes on the wire itself: reads with a watch
// (datawatch.go, watch.go), which go-zookeeper must not track, reads that
// end with their ctx (plainread.go), removeWatches, which it cannot send,
// and create2 (create2.go), whose reply it does not expose. Their replies
// carry a negative xid that go-zookeeper ignores (neither a ping nor a
// notification).
const (
	opGetData          = 4
	opCreate2          = 15
	opRemoveWatches    = 18
	opSetAuth          = 100
	xidInjected        = -0x5a5a
	watcherTypeData    = 2
	injectedHeaderSize = 4 + 4 + 4 + 4 // length, xid, opcode, path length
)

// maxCaptured bounds the body of a reply the session keeps whole.
const maxCaptured = 1 << 16

// frameReader splits a byte stream into 4-byte length-prefixed frames and
// hands the first 16 bytes of each body (the reply header) to a callback,
// or the whole body when capture asks for it.
type frameReader struct {
	lenBuf  [4]byte
	lenN    int
	head    [16]byte
	headN   int
	headLen int
	rest    int    // body bytes still to come after the head
	body    []byte // the whole body so far, when captured

	// capture, if set, is asked once per frame longer than its head
	// whether to keep the whole body (at most maxCaptured bytes).
	capture func(head []byte) bool

	// limit, if positive, is the longest frame accepted: feed fails on a
	// longer one (see frameLimitError) and must not be called again.
	limit int
}

// removeWatchesFrame encodes removeWatches(path, data watches).
func removeWatchesFrame(path string) []byte {
	f := requestFrame(opRemoveWatches, path, 4)
	binary.BigEndian.PutUint32(f[len(f)-4:], watcherTypeData)
	return f
}

// requestFrame encodes a request with a path and tail more bytes.
func requestFrame(op int32, path string, tail int) []byte {
	f := make([]byte, injectedHeaderSize+len(path)+tail)
	xid := int32(xidInjected)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	binary.BigEndian.PutUint32(f[4:], uint32(xid))
	binary.BigEndian.PutUint32(f[8:], uint32(op))
	binary.BigEndian.PutUint32(f[12:], uint32(len(path)))
	copy(f[16:], path)
	return f
}

// withoutZxid returns a copy of a connect request that presents its
// session without the last zxid seen (0): a server behind that zxid then
// judges the session itself instead of refusing to (see wire.go).
func withoutZxid(b []byte) []byte {
	out := append([]byte(nil), b...)
	clear(out[4+4 : 4+12]) // last zxid seen, after the protocol version
	return out
}

// feed parses b, calling onFrame for every frame it completes. It fails,
// parsing nothing further, on a frame longer than r.limit.
func (r *frameReader) feed(b []byte, onFrame func(head []byte)) error {
	for len(b) > 0 {
		if r.lenN < 4 {
			k := copy(r.lenBuf[r.lenN:], b)
			r.lenN += k
			b = b[k:]
			if r.lenN == 4 {
				total := int(binary.BigEndian.Uint32(r.lenBuf[:]))
				if r.limit > 0 && total > r.limit {
					return &frameLimitError{length: total, limit: r.limit}
				}
				r.headLen = min(total, len(r.head))
				r.headN = 0
				r.rest = total - r.headLen
				if total == 0 {
					r.lenN = 0
					onFrame(nil)
				}
			}
			continue
		}
		if r.headN < r.headLen {
			k := copy(r.head[r.headN:r.headLen], b)
			r.headN += k
			b = b[k:]
			r.startCapture()
		} else {
			k := min(r.rest, len(b))
			if r.body != nil {
				r.body = append(r.body, b[:k]...)
			}
			r.rest -= k
			b = b[k:]
		}
		if r.headN == r.headLen && r.rest == 0 {
			r.lenN = 0
			r.emit(onFrame)
		}
	}
	return nil
}

// startCapture decides, once the head is complete, whether to keep the body.
func (r *frameReader) startCapture() {
	head := r.head[:r.headLen]
	if r.headN < r.headLen || r.rest == 0 || r.rest > maxCaptured || r.capture == nil || !r.capture(head) {
		return
	}
	r.body = append(make([]byte, 0, r.headLen+r.rest), head...)
}

// emit hands the finished frame to onFrame: its whole body if captured.
func (r *frameReader) emit(onFrame func([]byte)) {
	if r.body == nil {
		onFrame(r.head[:r.headLen])
		return
	}
	body := r.body
	r.body = nil
	onFrame(body)
}

// frameOp returns the op code of a request frame (length prefix
// included), 0 if too short.
func frameOp(frame []byte) int32 {
	if len(frame) < 12 {
		return 0
	}
	return int32(binary.BigEndian.Uint32(frame[8:]))
}

// headXid returns the xid of a reply header (0 if too short).
func headXid(head []byte) int32 {
	if len(head) < 4 {
		return 0
	}
	return int32(binary.BigEndian.Uint32(head))
}
