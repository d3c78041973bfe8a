package jute

import (
	"encoding/binary"
	"fmt"
)

// headLen is how much of each frame's body a Splitter hands on when it
// does not keep the whole body: a reply header.
const headLen = HeaderLen

// Splitter splits a byte stream into 4-byte length-prefixed frames and
// hands the first HeaderLen bytes of each body (a reply header) to a
// callback, or the whole body when Capture asks for it. The zero value
// splits without limits and keeps no body.
type Splitter struct {
	// Capture, if set, is asked once per frame longer than its head
	// whether to keep the whole body (at most MaxCapture bytes).
	Capture func(head []byte) bool
	// MaxCapture bounds the body a Capture keeps; longer ones are handed
	// on as their head only.
	MaxCapture int
	// Limit, if positive, is the longest frame accepted: Feed fails on a
	// longer one (a *LimitError) and must not be called again.
	Limit int

	lenBuf  [4]byte
	lenN    int
	head    [headLen]byte
	headN   int
	headLen int
	rest    int    // body bytes still to come after the head
	body    []byte // the whole body so far, when captured
}

// LimitError is a frame length over a Splitter's Limit.
type LimitError struct{ Length, Limit int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("frame of %d bytes, over the %d-byte limit", e.Length, e.Limit)
}

// Feed parses b, calling onFrame for every frame it completes with the
// frame's head or whole body (valid only during the call). It fails,
// parsing nothing further, on a frame longer than Limit.
func (r *Splitter) Feed(b []byte, onFrame func(body []byte)) error {
	for len(b) > 0 {
		if r.lenN < 4 {
			k := copy(r.lenBuf[r.lenN:], b)
			r.lenN += k
			b = b[k:]
			if r.lenN == 4 {
				total := int(binary.BigEndian.Uint32(r.lenBuf[:]))
				if r.Limit > 0 && total > r.Limit {
					return &LimitError{Length: total, Limit: r.Limit}
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
func (r *Splitter) startCapture() {
	head := r.head[:r.headLen]
	if r.headN < r.headLen || r.rest == 0 || r.rest > r.MaxCapture || r.Capture == nil || !r.Capture(head) {
		return
	}
	r.body = append(make([]byte, 0, r.headLen+r.rest), head...)
}

// emit hands the finished frame to onFrame: its whole body if captured.
func (r *Splitter) emit(onFrame func([]byte)) {
	if r.body == nil {
		onFrame(r.head[:r.headLen])
		return
	}
	body := r.body
	r.body = nil
	onFrame(body)
}

// RequestHeader returns the xid and op code of a request frame (length
// prefix included); ok is false if it is too short.
func RequestHeader(frame []byte) (xid, op int32, ok bool) {
	if len(frame) < 12 {
		return 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(frame[4:])), int32(binary.BigEndian.Uint32(frame[8:])), true
}

// ReplyXid returns the xid of a reply body (header first), 0 if too short.
func ReplyXid(body []byte) int32 {
	if len(body) < 4 {
		return 0
	}
	return int32(binary.BigEndian.Uint32(body))
}

// ReplyHeader is the header of a reply: its xid, the zxid the server had
// applied when it answered, and the error code (0: ok).
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  Code
}

// DecodeReplyHeader decodes the header at the start of a reply body.
func DecodeReplyHeader(body []byte) (ReplyHeader, bool) {
	if len(body) < HeaderLen {
		return ReplyHeader{}, false
	}
	return ReplyHeader{
		Xid:  int32(binary.BigEndian.Uint32(body)),
		Zxid: int64(binary.BigEndian.Uint64(body[4:])),
		Err:  Code(int32(binary.BigEndian.Uint32(body[12:]))),
	}, true
}
