package recipe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// getData written by the session itself (see datawatch.go): the request
// with the watch flag and its reply, read off the wire by xid.

// errBodyNotKept means a reply's body was larger than the session keeps
// (maxCaptured): only its header arrived.
var errBodyNotKept = errors.New("reply body not kept")

// callBound bounds the wait for the reply to a request the session wrote,
// given the negotiated session timeout t. The connection's own liveness
// (go-zookeeper's pings and read deadline) ends a wait on a dead server;
// the bound only stops a reply that never comes on a live connection from
// holding its caller forever.
func callBound(t time.Duration) time.Duration { return max(4*t, 10*time.Second) }

// getDataFrame encodes getData(path, watch) with its own xid.
func getDataFrame(xid int32, path string, watch bool) []byte {
	f := requestFrame(opGetData, path, 1)
	binary.BigEndian.PutUint32(f[4:], uint32(xid))
	if watch {
		f[len(f)-1] = 1
	}
	return f
}

// parseGetDataReply decodes a getData reply: header (xid, zxid, error),
// then the data (length-prefixed, -1 for none) and the Stat. Only the
// Stat is returned. A reply with only its header and no error means the
// body was not kept (errBodyNotKept); a malformed one is reported like a
// lost connection (the outcome is unknown).
func parseGetDataReply(b []byte) (*zk.Stat, error) {
	if len(b) < 16 {
		return nil, fmt.Errorf("get data: short reply (%d bytes): %w", len(b), zk.ErrConnectionClosed)
	}
	if code := int32(binary.BigEndian.Uint32(b[12:])); code != 0 {
		return nil, replyError("get data", code)
	}
	b = b[16:]
	if len(b) == 0 {
		return nil, errBodyNotKept
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("get data: reply without data: %w", zk.ErrConnectionClosed)
	}
	n := max(int(int32(binary.BigEndian.Uint32(b))), 0) // -1: no data
	if len(b) != 4+n+statLen {
		return nil, fmt.Errorf("get data: malformed reply (%d bytes, data %d): %w", len(b), n, zk.ErrConnectionClosed)
	}
	return decodeStat(b[4+n:]), nil
}
