package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
)

// expireTimeout bounds one ExpireSession attempt against one server when
// ctx allows longer.
const expireTimeout = 10 * time.Second

// ErrNoSession is returned by ExpireSession when the server does not know
// the session: it has expired already, or the password is wrong.
var ErrNoSession = errors.New("testenv: no such session (expired already, or wrong password)")

// ExpireSession ends the session id on demand, the standard way: it opens a
// second connection that resumes the session with its password, closes the
// session from there (closeSession) and waits for the server's reply. The
// session's ephemeral znodes are then gone, and the original client learns
// of the expiry when it next talks to a server. It tries addrs in order,
// moving on when a server cannot be reached, each attempt bounded by ctx and
// 10 s, and returns once a server refuses the session it closed (its
// client may resume it meanwhile: then it is closed again). It returns
// ErrNoSession when the server refuses the session at the first attempt.
func ExpireSession(ctx context.Context, addrs []string, id int64, password []byte) error {
	if len(addrs) == 0 {
		return fmt.Errorf("%w: ExpireSession needs a server address", ErrBadOptions)
	}
	var errs []error
	for _, addr := range addrs {
		err := expireAt(ctx, addr, id, password)
		if err == nil || errors.Is(err, ErrNoSession) || ctx.Err() != nil {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("expire session 0x%x: %w", id, errors.Join(errs...))
}

// ExpireConn expires the session of a go-zookeeper (v1.0.4) connection, as
// ExpireSession does. The session password is not exported by zk.Conn, so
// it is read by reflection; it returns an error if the field is missing
// (another go-zookeeper version) or the connection has no session yet.
func ExpireConn(ctx context.Context, addrs []string, conn *zk.Conn) error {
	id := conn.SessionID()
	if id == 0 {
		return fmt.Errorf("expire conn: %w: it has no session", ErrNoSession)
	}
	f := reflect.ValueOf(conn).Elem().FieldByName("passwd")
	if !f.IsValid() || f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.Uint8 {
		return errors.New("testenv: expire conn: zk.Conn has no passwd []byte field (go-zookeeper version?)")
	}
	return ExpireSession(ctx, addrs, id, append([]byte(nil), f.Bytes()...))
}

// expireAttempts bounds how many times expireAt closes a session its
// client keeps resuming.
const expireAttempts = 10

// expireAt resumes session id on the server at addr and closes it, then
// resumes it once more to see it gone: a client that reconnects at once
// (zkconn does after a connection that served its session drops) can
// resume the session between the resumption here and the closeSession,
// which the server then drops (the session moved) while closing this
// connection as it does after a close. A session found alive again is
// closed again, up to expireAttempts times.
func expireAt(ctx context.Context, addr string, id int64, password []byte) error {
	closed := false // a closeSession was sent and the connection closed
	for range expireAttempts {
		err := closeAt(ctx, addr, id, password)
		switch {
		case errors.Is(err, ErrNoSession) && closed:
			return nil // closed by an attempt before
		case errors.Is(err, io.EOF) && ctx.Err() == nil:
			continue // closed before the connect response: the client was resuming the session
		case err != nil:
			return err
		}
		closed = true
	}
	return fmt.Errorf("expire session 0x%x at %s: its client resumed it after each of %d closes", id, addr, expireAttempts)
}

// closeAt resumes session id on the server at addr and closes it.
func closeAt(ctx context.Context, addr string, id int64, password []byte) error {
	ctx, cancel := context.WithTimeout(ctx, expireTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	err = jute.CloseSession(conn, id, password, expireTimeout)
	if errors.Is(err, jute.ErrSessionRefused) {
		return fmt.Errorf("expire session 0x%x at %s: %w", id, addr, ErrNoSession)
	}
	if err != nil {
		return fmt.Errorf("expire session 0x%x at %s: %w", id, addr, err)
	}
	return nil
}
