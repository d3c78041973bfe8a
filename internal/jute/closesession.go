package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrSessionRefused: the server did not resume the session CloseSession
// presented (it expired or was closed already, or the password is wrong).
var ErrSessionRefused = errors.New("jute: session refused (expired or closed already, or wrong password)")

// closeXid is the xid of the closeSession request CloseSession sends.
const closeXid int32 = 1

// maxCloseFrame bounds a frame CloseSession reads (the connect response, a
// reply header, or a watch event of the resumed session queued before the
// reply).
const maxCloseFrame = 1 << 20

// CloseSession ends session id the standard way, over rw, a fresh
// connection to one server: it resumes the session with its password
// (asking for timeout; last zxid 0, which never exceeds the server's), sends
// closeSession and reads until its reply, or the server's end of the
// stream, which it sends once it has applied the close (ZooKeeper
// Programmer's Guide: a session moves to the connection that presents its
// id and password). The server then deletes the session's ephemeral
// znodes. It fails with ErrSessionRefused when the server does not resume
// the session, and with the read or write error of rw otherwise; the
// caller bounds it with rw's deadline.
func CloseSession(rw io.ReadWriter, id int64, password []byte, timeout time.Duration) error {
	if _, err := rw.Write(ConnectRequest(0, timeout, id, password)); err != nil {
		return fmt.Errorf("send connect request: %w", err)
	}
	body, err := ReadFrame(rw, maxCloseFrame)
	if err != nil {
		return fmt.Errorf("read connect response: %w", err)
	}
	r, ok := DecodeConnectResponse(body)
	switch {
	case !ok:
		return fmt.Errorf("connect response of %d bytes", len(body))
	case r.Timeout <= 0 || r.SessionID != id: // a refused session: timeout 0, another id
		return ErrSessionRefused
	}
	if _, err := rw.Write(NewRequest(closeXid, OpCloseSession, 0).Frame()); err != nil {
		return fmt.Errorf("send closeSession: %w", err)
	}
	for {
		body, err := ReadFrame(rw, maxCloseFrame)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("await closeSession reply: %w", err)
		case len(body) >= 4 && ReplyXid(body) == closeXid:
			return nil
		}
	}
}

// ReadFrame reads one frame from r and returns its body (without the
// length prefix). A frame longer than limit bytes (or of a negative length)
// fails with a *LimitError, before anything is allocated for it; a stream
// that ends cleanly before the frame fails with io.EOF.
func ReadFrame(r io.Reader, limit int) ([]byte, error) {
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(prefix[:]))
	if n < 0 || int(n) > limit {
		return nil, &LimitError{Length: int(n), Limit: limit}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}
