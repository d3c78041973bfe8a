package testenv

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/zkelect/zkelect/internal/jute"
)

// ZooKeeper operation codes, as sent in a request header, for
// Proxy.CutAfterRequest. They are ZooKeeper's ZooDefs.OpCode, from the
// codec the client layer uses (internal/jute).
const (
	OpCreate          = jute.OpCreate
	OpDelete          = jute.OpDelete
	OpExists          = jute.OpExists
	OpGetData         = jute.OpGetData
	OpSetData         = jute.OpSetData
	OpGetACL          = jute.OpGetACL
	OpSetACL          = jute.OpSetACL
	OpGetChildren     = jute.OpGetChildren
	OpSync            = jute.OpSync
	OpPing            = jute.OpPing
	OpGetChildren2    = jute.OpGetChildren2
	OpCheck           = jute.OpCheck
	OpMulti           = jute.OpMulti
	OpCreate2         = jute.OpCreate2
	OpReconfig        = jute.OpReconfig
	OpCreateContainer = jute.OpCreateContainer
	OpCreateTTL       = jute.OpCreateTTL
	OpCloseSession    = jute.OpCloseSession
	OpSetAuth         = jute.OpSetAuth
	OpSetWatches      = jute.OpSetWatches
)

// maxFrame bounds a frame's length. ZooKeeper refuses requests above
// jute.maxbuffer (1 MiB by default); replies such as a long child list can
// be larger, so the bound is generous. A longer frame is a protocol error.
const maxFrame = 64 << 20

// ZooKeeper's wire format: every message is a frame, a big-endian int32
// length followed by that many bytes. The first frame each way is the
// session handshake (ConnectRequest, ConnectResponse); after it a request
// starts with xid int32 and op int32, and a reply with xid int32, zxid int64
// and err int32.

// readFrame reads one frame and returns it whole, length prefix included,
// so that it can be forwarded unchanged. It returns ErrProtocol for a
// negative or oversized length.
func readFrame(r io.Reader) ([]byte, error) {
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(prefix[:]))
	if n < 0 || n > maxFrame {
		return nil, fmt.Errorf("%w: frame length %d", ErrProtocol, n)
	}
	frame := make([]byte, 4+int(n))
	copy(frame, prefix[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// requestHeader returns the xid and op code of a request frame.
func requestHeader(frame []byte) (xid, op int32, ok bool) { return jute.RequestHeader(frame) }

// replyXid returns the xid of a reply frame.
func replyXid(frame []byte) (int32, bool) {
	if len(frame) < 8 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(frame[4:])), true
}
