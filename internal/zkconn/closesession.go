package zkconn

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// closeAttempt bounds one CloseSession attempt against one server when ctx
// allows longer.
const closeAttempt = 5 * time.Second

// ErrUnknownSession is returned by CloseSession when the server does not know
// the session: it has expired or been closed already, or the password is
// wrong.
var ErrUnknownSession = errors.New("zkconn: no such session (expired or closed already, or wrong password)")

// CloseSession ends session id on another process's behalf (zkelect's
// watchdog, once that process is provably dead): it resumes the session
// with its password on a new connection, sends closeSession and waits for
// the reply, so the server deletes the session's ephemeral znodes at once
// (ZooKeeper Programmer's Guide: a session moves to the connection that
// presents its id and password). It tries servers ("host:port") in order,
// moving on when one cannot be reached, each attempt bounded by ctx and 5s;
// dial (nil: plain TCP) opens the connections. It returns ErrUnknownSession when
// a server refuses the session.
func CloseSession(ctx context.Context, servers []string, id int64, password []byte,
	dial func(ctx context.Context, network, addr string) (net.Conn, error)) error {
	if len(servers) == 0 {
		return errors.New("zkconn: CloseSession needs a server")
	}
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	var errs []error
	for _, addr := range servers {
		err := closeAt(ctx, addr, id, password, dial)
		if err == nil || errors.Is(err, ErrUnknownSession) || ctx.Err() != nil {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("close session 0x%x: %w", uint64(id), errors.Join(errs...))
}

// Frames of the exchange (ZooKeeper's jute encoding, big-endian, each
// prefixed by its length).
const (
	opCloseSession int32 = -11
	closeXid       int32 = 1
)

func closeAt(ctx context.Context, addr string, id int64, password []byte,
	dial func(ctx context.Context, network, addr string) (net.Conn, error)) error {
	ctx, cancel := context.WithTimeout(ctx, closeAttempt)
	defer cancel()
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	// ConnectRequest: protocol version, last zxid seen, timeout (ms),
	// session id, password; lastZxidSeen 0 never exceeds the server's.
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, uint32(closeAttempt/time.Millisecond))
	req = binary.BigEndian.AppendUint64(req, uint64(id))
	req = binary.BigEndian.AppendUint32(req, uint32(len(password)))
	req = append(req, password...)
	if err := writeFrame(conn, req); err != nil {
		return fmt.Errorf("send connect request to %s: %w", addr, err)
	}
	resp, err := readFrame(conn)
	if err != nil {
		return fmt.Errorf("read connect response from %s: %w", addr, err)
	}
	// ConnectResponse: protocol version, timeout, session id, ...; a
	// refused session comes back with timeout 0 and another id.
	if len(resp) < 16 {
		return fmt.Errorf("connect response from %s: %d bytes", addr, len(resp))
	}
	if int32(binary.BigEndian.Uint32(resp[4:])) <= 0 || int64(binary.BigEndian.Uint64(resp[8:])) != id {
		return fmt.Errorf("close session 0x%x at %s: %w", uint64(id), addr, ErrUnknownSession)
	}
	op := opCloseSession
	bye := binary.BigEndian.AppendUint32(nil, uint32(closeXid))
	bye = binary.BigEndian.AppendUint32(bye, uint32(op))
	if err := writeFrame(conn, bye); err != nil {
		return fmt.Errorf("send closeSession to %s: %w", addr, err)
	}
	return awaitClosed(conn)
}

// awaitClosed reads frames until the closeSession reply. The server closes
// the connection once it has applied closeSession, so a clean end of the
// stream counts as the reply.
func awaitClosed(conn net.Conn) error {
	for {
		f, err := readFrame(conn)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("await closeSession reply: %w", err)
		}
		if len(f) >= 4 && int32(binary.BigEndian.Uint32(f)) == closeXid {
			return nil
		}
	}
}

func writeFrame(w io.Writer, body []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	return err
}

// maxCloseFrame bounds a frame of the exchange (a reply header, or a watch
// event of the resumed session queued before the reply).
const maxCloseFrame = 1 << 20

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxCloseFrame {
		return nil, fmt.Errorf("frame of %d bytes", size)
	}
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}
