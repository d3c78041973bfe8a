package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Watched reads that go-zookeeper does not track.
//
// GetW, ChildrenW and ExistsW read a znode and leave a one-shot watch on
// it, like go-zookeeper's methods of the same names, but the session
// writes the request on the wire itself, reads its reply by xid (see
// wirecall.go) and keeps the watch in its own table (watchtable.go):
//
//   - go-zookeeper holds no channel for it, so a watch nobody waits for
//     holds nothing, and go-zookeeper's re-setting of its watches after a
//     reconnect (racy in v1.0.4) never runs;
//   - a watch whose ctx ends before it fires is forgotten, and removed from
//     the server (removeWatches) unless another user of the session still
//     relies on the same server-side watch;
//   - the server keeps watches per connection: when the connection drops,
//     the session expires or closes, every watch ends with one
//     zk.EventNotWatching event, and the caller reads again (once
//     reconnected), which sets the watch again.
//
// A reply larger than the session keeps off the wire (maxCaptured) is read
// again with go-zookeeper's plain Get or Children behind the watched
// request: the watch is set by then, so no change is missed.

// watchedRead describes one kind of watched read.
type watchedRead struct {
	name string // for errors
	op   int32
	kind watchKind
}

var (
	readData     = watchedRead{"get data", opGetData, watchData}
	readChildren = watchedRead{"list", opGetChildren2, watchChild}
	readExists   = watchedRead{"exists", opExists, watchData}
)

// GetW returns the data and Stat of the znode at path and a channel that
// receives one event when the znode's data changes or it is deleted
// (zk.EventNodeDataChanged, zk.EventNodeDeleted), or zk.EventNotWatching
// when the watch is lost with the connection (Event.State is
// zk.StateDisconnected or zk.StateExpired, Event.Err says why); the channel
// is then closed. ctx bounds the call and the watch: once it ends before an
// event, the watch is forgotten and the channel receives nothing. While
// the session is disconnected the call waits for the next connection, at
// most the session timeout.
//
// Errors are go-zookeeper's (errors.Is zk.ErrNoNode: no watch is left
// then; zk.ErrConnectionClosed: the connection dropped or no connection
// came within the session timeout), ErrACLDenied, ErrSessionClosed,
// ErrNilSession, ErrInvalidPath (a path as for elections, or "/"), or
// ctx's error.
func (s *Session) GetW(ctx context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	body, sh, err := s.watchedRead(ctx, readData, path)
	if err != nil {
		return nil, nil, nil, err
	}
	data, st, err := settle(s, readData, sh, body, decodeDataReply, s.conn.Get)
	if err != nil {
		return nil, nil, nil, err
	}
	return data, st, sh.ch, nil
}

// ChildrenW returns the names of the children of the znode at path, its
// Stat, and a channel that receives one event when a child is created or
// deleted or the znode is deleted (zk.EventNodeChildrenChanged,
// zk.EventNodeDeleted), or zk.EventNotWatching as for GetW. ctx and errors
// are as for GetW.
func (s *Session) ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	body, sh, err := s.watchedRead(ctx, readChildren, path)
	if err != nil {
		return nil, nil, nil, err
	}
	names, st, err := settle(s, readChildren, sh, body, decodeChildrenReply, s.conn.Children)
	if err != nil {
		return nil, nil, nil, err
	}
	return names, st, sh.ch, nil
}

// ExistsW reports whether the znode at path exists, its Stat (nil when it
// does not), and a channel that receives one event when it is created,
// changed or deleted (zk.EventNodeCreated, zk.EventNodeDataChanged,
// zk.EventNodeDeleted), or zk.EventNotWatching as for GetW. A missing
// znode is not an error: the watch is set and fires on its creation. ctx
// and errors are as for GetW.
func (s *Session) ExistsW(ctx context.Context, path string) (bool, *zk.Stat, <-chan zk.Event, error) {
	body, sh, err := s.watchedRead(ctx, readExists, path)
	if err != nil {
		return false, nil, nil, err
	}
	rest, err := replyBody(readExists.name, body)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil, sh.ch, nil
	}
	if err != nil {
		s.watches.forget(sh, false)
		return false, nil, nil, aclError(readExists.name, path, err)
	}
	st, err := decodeExistsReply(rest)
	if err != nil {
		s.watches.forget(sh, true)
		return false, nil, nil, fmt.Errorf("exists %s: %w", path, err)
	}
	return true, st, sh.ch, nil
}

// watchedRead records a shot for path, writes r's request with the watch
// flag and returns its reply (header first). On error the shot is
// forgotten.
func (s *Session) watchedRead(ctx context.Context, r watchedRead, path string) ([]byte, *shot, error) {
	if s == nil {
		return nil, nil, ErrNilSession
	}
	if path != "/" {
		if err := validatePath(path); err != nil {
			return nil, nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", r.name, path, err)
	}
	call := newPendingCall(s.wire.nextCallXid())
	sh, err := s.watches.add(ctx, watchKey{path, r.kind}, call)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", r.name, path, err)
	}
	err = s.write(ctx, call, readFrame(r.op, call.xid, path, true), true)
	var body []byte
	if err == nil {
		s.watches.written(sh)
		body, err = s.await(ctx, call)
	}
	if err != nil {
		s.watches.forget(sh, true)
		return nil, nil, fmt.Errorf("%s %s: %w", r.name, path, err)
	}
	return body, sh, nil
}

// exchange writes frame, the request of call, on the connection once it is
// ready, and waits for the reply; both waits end with ctx.
func (s *Session) exchange(ctx context.Context, call *pendingCall, frame []byte) ([]byte, error) {
	if err := s.write(ctx, call, frame, true); err != nil {
		return nil, err
	}
	return s.await(ctx, call)
}

// write writes frame, the request of call, on the connection once it is
// ready, at most a session timeout later (see awaitReady for redial). It
// fails with ctx's error, ErrSessionClosed (with redial, after Close), or
// an error wrapping zk.ErrConnectionClosed: no connection was ready, or
// the write failed (the request may then have reached the server).
func (s *Session) write(ctx context.Context, call *pendingCall, frame []byte, redial bool) error {
	t := s.wire.timeout()
	c := s.wire.awaitReady(ctx, s.done, t, redial)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case c == nil && redial && s.isClosed():
		return ErrSessionClosed
	case c == nil:
		return fmt.Errorf("no connection ready (waited at most %v): %w", t, zk.ErrConnectionClosed)
	case !c.call(call, frame):
		return fmt.Errorf("write: %w", zk.ErrConnectionClosed)
	}
	return nil
}

// await waits for the reply to call, at most callBound of the session
// timeout. It fails with ctx's error, or one wrapping
// zk.ErrConnectionClosed when the connection closed or the bound passed
// first: the request's fate is then unknown.
func (s *Session) await(ctx context.Context, call *pendingCall) ([]byte, error) {
	body, ok := call.waitCtx(ctx, callBound(s.wire.timeout()))
	switch {
	case ok:
		return body, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("no reply: %w", zk.ErrConnectionClosed)
}

// isClosed reports whether Close was called.
func (s *Session) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// settle decodes the reply of a watched read of r with decode. A reply
// whose body the session did not keep is read again with plain (a
// go-zookeeper read without a watch): the watch is set by then. On error
// the shot is forgotten, and its watch removed if it may have been set.
func settle[T any](s *Session, r watchedRead, sh *shot, reply []byte,
	decode func([]byte) (T, *zk.Stat, error), plain func(string) (T, *zk.Stat, error)) (T, *zk.Stat, error) {
	var v T
	var st *zk.Stat
	rest, err := replyBody(r.name, reply)
	switch {
	case errors.Is(err, errBodyNotKept):
		v, st, err = plain(sh.key.path)
	case err != nil: // the server refused: no watch set
		s.watches.forget(sh, false)
		return v, nil, aclError(r.name, sh.key.path, err)
	default:
		v, st, err = decode(rest)
	}
	if err != nil {
		s.watches.forget(sh, true)
		return v, nil, aclError(r.name, sh.key.path, err)
	}
	return v, st, nil
}
