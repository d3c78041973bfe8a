package jute

import (
	"encoding/binary"
	"time"
)

// ConnectRequestLen is the length of a connect request body without the
// trailing readOnly byte: protocol version, last zxid seen, timeout (ms),
// session id, password (4+16 bytes). go-zookeeper v1.0.4 sends exactly
// this; ZooKeeper's Java client (3.4+) adds the readOnly byte, and a
// server accepts both.
const ConnectRequestLen = 4 + 8 + 4 + 8 + 4 + 16

// IsConnectRequest reports whether frame (length prefix included) has the
// layout of a connect request, with or without the readOnly byte.
func IsConnectRequest(frame []byte) bool {
	if len(frame) < 4 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		return false
	}
	n := len(frame) - 4
	return n == ConnectRequestLen || n == ConnectRequestLen+1
}

// ConnectLastZxid returns the last zxid seen of a connect request frame.
func ConnectLastZxid(frame []byte) int64 { return int64(binary.BigEndian.Uint64(frame[8:])) }

// WithLastZxid returns a copy of a connect request frame presenting zxid as
// the last zxid seen (0: none, so that a server behind the session's view
// judges the session instead of refusing it), the session id and password
// unchanged.
func WithLastZxid(frame []byte, zxid int64) []byte {
	out := append([]byte(nil), frame...)
	binary.BigEndian.PutUint64(out[8:], uint64(zxid))
	return out
}

// ConnectResponse is a connect response: the negotiated timeout and the
// session granted (0: refused, the session expired), and its password when
// the whole body was read.
type ConnectResponse struct {
	Timeout   time.Duration
	SessionID int64
	Password  []byte // nil when only the head was decoded
}

// DecodeConnectResponse decodes a connect response body: protocol version,
// timeout (ms), session id (the first 16 bytes, enough alone), then the
// password buffer (length and bytes) when body holds it.
func DecodeConnectResponse(body []byte) (ConnectResponse, bool) {
	if len(body) < 16 {
		return ConnectResponse{}, false
	}
	r := ConnectResponse{
		Timeout:   time.Duration(int32(binary.BigEndian.Uint32(body[4:]))) * time.Millisecond,
		SessionID: int64(binary.BigEndian.Uint64(body[8:])),
	}
	if len(body) >= 20 {
		if n := int(int32(binary.BigEndian.Uint32(body[16:]))); n > 0 && len(body) >= 20+n {
			r.Password = append([]byte(nil), body[20:20+n]...)
		}
	}
	return r, true
}

// ConnectRequest encodes a connect request frame (length prefix included)
// presenting lastZxid, asking for timeout (whole milliseconds) and resuming
// session id with password (0 and nil: a new session), without the readOnly
// byte, like go-zookeeper's.
func ConnectRequest(lastZxid int64, timeout time.Duration, id int64, password []byte) []byte {
	e := &Encoder{b: make([]byte, 4, 4+ConnectRequestLen)}
	e.Int32(0) // protocol version
	e.Int64(lastZxid)
	e.Int32(int32(timeout / time.Millisecond))
	e.Int64(id)
	e.Buffer(append([]byte{}, password...)) // never a null buffer
	return e.Frame()
}

// ConnectSessionID returns the session id a connect request frame
// presents (0: it asks for a new session).
func ConnectSessionID(frame []byte) int64 { return int64(binary.BigEndian.Uint64(frame[20:])) }
