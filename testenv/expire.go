package testenv

import (
	"context"
	"errors"
	"fmt"
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
// 10 s. It returns ErrNoSession when the server refuses the session.
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

// expireAt resumes session id on the server at addr and closes it.
func expireAt(ctx context.Context, addr string, id int64, password []byte) error {
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
