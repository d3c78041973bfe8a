package recipe

import "encoding/binary"

// Encoding and decoding of the few ZooKeeper frames the session reads or
// writes itself (see wire.go).

// connectRequestLen is the length of go-zookeeper's connect request body:
// protocol version, last zxid, timeout, session id, password (4+16 bytes).
const connectRequestLen = 4 + 8 + 4 + 8 + 4 + 16

// Requests the session writes on the wire itself (see datawatch.go):
// getData with a watch, which go-zookeeper must not track, and
// removeWatches, which it cannot send. Their replies carry a negative xid
// that go-zookeeper ignores (neither a ping nor a notification).
const (
	opGetData          = 4
	opRemoveWatches    = 18
	opSetAuth          = 100
	xidInjected        = -0x5a5a
	watcherTypeData    = 2
	injectedHeaderSize = 4 + 4 + 4 + 4 // length, xid, opcode, path length
)

// frameReader splits a byte stream into 4-byte length-prefixed frames and
// hands the first headLen bytes of each body to a callback.
type frameReader struct {
	lenBuf  [4]byte
	lenN    int
	head    [16]byte
	headN   int
	headLen int
	rest    int // body bytes still to come after the head
}

// removeWatchesFrame encodes removeWatches(path, data watches).
func removeWatchesFrame(path string) []byte {
	f := requestFrame(opRemoveWatches, path, 4)
	binary.BigEndian.PutUint32(f[len(f)-4:], watcherTypeData)
	return f
}

// getDataWatchFrame encodes getData(path, watch=true).
func getDataWatchFrame(path string) []byte {
	f := requestFrame(opGetData, path, 1)
	f[len(f)-1] = 1
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

// forgetSession returns a copy of a connect request asking for a new
// session: last zxid 0, session id 0, empty password.
func forgetSession(b []byte) []byte {
	out := append([]byte(nil), b...)
	body := out[4:]
	clear(body[4:12])  // last zxid seen
	clear(body[16:24]) // session id
	clear(body[28:44]) // password bytes (length stays 16)
	return out
}

func (r *frameReader) feed(b []byte, onFrame func(head []byte)) {
	for len(b) > 0 {
		if r.lenN < 4 {
			k := copy(r.lenBuf[r.lenN:], b)
			r.lenN += k
			b = b[k:]
			if r.lenN == 4 {
				total := int(binary.BigEndian.Uint32(r.lenBuf[:]))
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
		} else {
			k := min(r.rest, len(b))
			r.rest -= k
			b = b[k:]
		}
		if r.headN == r.headLen && r.rest == 0 {
			r.lenN = 0
			onFrame(r.head[:r.headLen])
		}
	}
}
