package zkconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/zkelect/zkelect/internal/jute"
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
	err = jute.CloseSession(conn, id, password, closeAttempt)
	if errors.Is(err, jute.ErrSessionRefused) {
		return fmt.Errorf("close session 0x%x at %s: %w", uint64(id), addr, ErrUnknownSession)
	}
	if err != nil {
		return fmt.Errorf("close session 0x%x at %s: %w", uint64(id), addr, err)
	}
	return nil
}
