package zkconn

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/znode"
)

// Watched reads that go-zookeeper does not track.
//
// GetW, ChildrenW and ExistsW read a znode and leave a one-shot watch on
// it, like go-zookeeper's methods of the same names, but the session
// writes the request on the wire itself, reads its reply by xid (see
// wirecall.go) and keeps the watch in its one table (watchtable.go,
// watchshot.go), beside the routed data watches of WatchData:
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

// watchedRead describes one kind of watched read.
type watchedRead struct {
	name string // for errors
	op   int32
	kind watchKind
}

var (
	readData     = watchedRead{"get data", jute.OpGetData, watchData}
	readChildren = watchedRead{"list", jute.OpGetChildren2, watchChild}
	readExists   = watchedRead{"exists", jute.OpExists, watchData}
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
// Errors name the operation and path and wrap go-zookeeper's errors
// (zk.ErrNoNode: no watch is left then; zk.ErrNoAuth; zk.ErrConnectionClosed:
// the connection dropped or no connection came within the session
// timeout), a *CodeError, ErrClosed, a *PathError (see znode.CheckPath), or ctx's
// error.
func (s *Conn) GetW(ctx context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	body, sh, err := s.watchedRead(ctx, readData, path)
	if err != nil {
		return nil, nil, nil, err
	}
	data, st, err := settle(s, readData, sh, body, decodeData)
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
func (s *Conn) ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	body, sh, err := s.watchedRead(ctx, readChildren, path)
	if err != nil {
		return nil, nil, nil, err
	}
	names, st, err := settle(s, readChildren, sh, body, decodeChildren)
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
func (s *Conn) ExistsW(ctx context.Context, path string) (bool, *zk.Stat, <-chan zk.Event, error) {
	body, sh, err := s.watchedRead(ctx, readExists, path)
	if err != nil {
		return false, nil, nil, err
	}
	st, err := decodeStat(readExists.name, body)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		s.shotAnswered(sh)
		return false, nil, sh.ch, nil
	case err != nil:
		_, refused := replyBody(readExists.name, body)
		s.forgetShot(sh, refused == nil)
		return false, nil, nil, fmt.Errorf("%s %s: %w", readExists.name, path, err)
	}
	s.shotAnswered(sh)
	return true, st, sh.ch, nil
}

// watchedRead records a shot for path, writes r's request with the watch
// flag and returns its reply (header first). On error the shot is
// forgotten.
func (s *Conn) watchedRead(ctx context.Context, r watchedRead, path string) ([]byte, *shot, error) {
	if err := znode.CheckPath(path); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", r.name, path, err)
	}
	call := newPendingCall(s.wire.nextCallXid())
	sh, err := s.addShot(ctx, watchKey{path, r.kind}, call)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", r.name, path, err)
	}
	err = s.write(ctx, call, jute.ReadRequest(call.xid, r.op, path, true), true)
	var body []byte
	if err == nil {
		s.shotWritten(sh)
		body, err = s.await(ctx, call)
	}
	if err != nil {
		s.forgetShot(sh, true)
		return nil, nil, fmt.Errorf("%s %s: %w", r.name, path, err)
	}
	return body, sh, nil
}

// settle decodes the reply of a watched read of r with decode. On error
// the shot is forgotten, and its watch removed if it may have been set
// (the server refused nothing, the body did not decode).
func settle[T any](s *Conn, r watchedRead, sh *shot, reply []byte,
	decode func([]byte) (T, *zk.Stat, error)) (T, *zk.Stat, error) {
	v, st, err := decode(reply)
	if err != nil {
		_, refused := replyBody(r.name, reply)
		s.forgetShot(sh, refused == nil)
		return v, nil, fmt.Errorf("%s %s: %w", r.name, sh.key.path, err)
	}
	s.shotAnswered(sh)
	return v, st, nil
}
