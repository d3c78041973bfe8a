package recipe

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// go-zookeeper v1.0.4's Create returns no Stat, so a candidate would have to
// read its new znode back for the czxid (its fencing token) and owner. The
// session writes ZooKeeper's create2 (3.5+) itself instead, whose reply
// carries the Stat, and reads that reply off the wire (see wirecall.go).

// create2Call is a create2 request in flight.
type create2Call struct {
	s    *Session
	call *pendingCall
}

// sendCreate2 writes create2(path, data, acl, flags) on the ready
// connection (after the session's credentials are replayed on it). An error
// (zk.ErrConnectionClosed) means no connection took it in time; the request
// may still have reached a server.
func (s *Session) sendCreate2(path string, data []byte, flags int32, acl []zk.ACL) (*create2Call, error) {
	call := newPendingCall(s.wire.nextCallXid())
	if err := s.write(context.Background(), call, create2Frame(call.xid, path, data, flags, acl), false); err != nil {
		return nil, fmt.Errorf("create2 %s: %w", path, err)
	}
	return &create2Call{s: s, call: call}, nil
}

// result waits for the reply, at most callBound of the session timeout: the
// created path and its Stat. An error wrapping zk.ErrConnectionClosed means
// the outcome is unknown.
func (c *create2Call) result() (string, *zk.Stat, error) {
	body, err := c.s.await(context.Background(), c.call)
	if err != nil {
		return "", nil, fmt.Errorf("create2: %w", err)
	}
	return parseCreate2Reply(body)
}

// create2Frame encodes create2: header (xid, op), path, data, ACL, flags.
func create2Frame(xid int32, path string, data []byte, flags int32, acl []zk.ACL) []byte {
	f := make([]byte, 4, 64+len(path)+len(data))
	f = binary.BigEndian.AppendUint32(f, uint32(xid))
	f = binary.BigEndian.AppendUint32(f, uint32(int32(opCreate2)))
	f = appendString(f, path)
	if data == nil {
		f = binary.BigEndian.AppendUint32(f, ^uint32(0)) // -1: null buffer
	} else {
		f = appendString(f, string(data))
	}
	f = binary.BigEndian.AppendUint32(f, uint32(len(acl)))
	for _, a := range acl {
		f = binary.BigEndian.AppendUint32(f, uint32(a.Perms))
		f = appendString(f, a.Scheme)
		f = appendString(f, a.ID)
	}
	f = binary.BigEndian.AppendUint32(f, uint32(flags))
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	return f
}

func appendString(f []byte, s string) []byte {
	f = binary.BigEndian.AppendUint32(f, uint32(len(s)))
	return append(f, s...)
}

// statLen is the encoded size of a Stat: czxid, mzxid, ctime, mtime
// (8 each), version, cversion, aversion (4 each), ephemeralOwner (8),
// dataLength, numChildren (4 each), pzxid (8).
const statLen = 4*8 + 3*4 + 8 + 2*4 + 8

// parseCreate2Reply decodes a create2 reply body: header (xid, zxid, error
// code), then on success the created path and its Stat.
func parseCreate2Reply(b []byte) (string, *zk.Stat, error) {
	if len(b) < 16 {
		return "", nil, fmt.Errorf("create2: short reply (%d bytes): %w", len(b), zk.ErrConnectionClosed)
	}
	if code := int32(binary.BigEndian.Uint32(b[12:])); code != 0 {
		return "", nil, replyError("create2", code)
	}
	b = b[16:]
	if len(b) < 4 {
		return "", nil, fmt.Errorf("create2: reply without path: %w", zk.ErrConnectionClosed)
	}
	n := int(binary.BigEndian.Uint32(b))
	if n < 0 || len(b) != 4+n+statLen {
		return "", nil, fmt.Errorf("create2: malformed reply (%d bytes, path %d): %w", len(b), n, zk.ErrConnectionClosed)
	}
	return string(b[4 : 4+n]), decodeStat(b[4+n:]), nil
}

// decodeStat decodes an encoded Stat of statLen bytes.
func decodeStat(s []byte) *zk.Stat {
	u64 := func(i int) int64 { return int64(binary.BigEndian.Uint64(s[i:])) }
	u32 := func(i int) int32 { return int32(binary.BigEndian.Uint32(s[i:])) }
	return &zk.Stat{
		Czxid: u64(0), Mzxid: u64(8), Ctime: u64(16), Mtime: u64(24),
		Version: u32(32), Cversion: u32(36), Aversion: u32(40),
		EphemeralOwner: u64(44), DataLength: u32(52), NumChildren: u32(56), Pzxid: u64(60),
	}
}

// replyError maps the error code of a reply to op to go-zookeeper's
// errors, so callers test them as for its own calls.
func replyError(op string, code int32) error {
	switch code {
	case -4: // connection loss
		return zk.ErrConnectionClosed
	case -8:
		return zk.ErrBadArguments
	case -101:
		return zk.ErrNoNode
	case -102:
		return zk.ErrNoAuth
	case -108:
		return zk.ErrNoChildrenForEphemerals
	case -110:
		return zk.ErrNodeExists
	case -112:
		return zk.ErrSessionExpired
	case -114:
		return zk.ErrInvalidACL
	case -115:
		return zk.ErrAuthFailed
	case -116:
		return zk.ErrClosing
	case -118:
		return zk.ErrSessionMoved
	}
	return fmt.Errorf("%s: zookeeper error code %d: %w", op, code, zk.ErrAPIError)
}

// childName returns the last element of a znode path.
func childName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
