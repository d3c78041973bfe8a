package zkconn

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/internal/jute"
	"github.com/zkelect/zkelect/internal/znode"
)

// The layer's operations without a watch. go-zookeeper's methods of the
// same names take no context: a caller that gives up on one leaves it
// waiting until the server answers. These write the request themselves and
// read the reply by xid (wirecall.go), so a cancelled call holds nothing:
// the request stays in flight on the wire until answered (for the request
// deadline and the lease), which costs nothing.
//
// Every operation waits for a ready connection at most the session
// timeout, and for its reply at most callBound. Errors are the error
// table's (go-zookeeper's zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion,
// zk.ErrNoAuth, ... or a *CodeError; one wrapping zk.ErrConnectionClosed
// when the outcome is unknown; see Classify), one wrapping
// zk.ErrSessionExpired at once when the session the call started in
// expired before it was sent (wirecall.go), ErrClosed after Close, a
// *PathError for a path ZooKeeper refuses, or ctx's error. Like
// go-zookeeper's, they do not name the path: callers add what they were
// doing.

// Get returns the data and Stat of the znode at path.
func (s *Conn) Get(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.ReadRequest(xid, jute.OpGetData, path, false)
	})
	if err != nil {
		return nil, nil, err
	}
	data, st, err := decodeData(reply)
	if err == nil {
		s.noteStat(path, st)
	}
	return data, st, err
}

// Children returns the names of the children of the znode at path and its
// Stat.
func (s *Conn) Children(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.ReadRequest(xid, jute.OpGetChildren2, path, false)
	})
	if err != nil {
		return nil, nil, err
	}
	names, st, err := decodeChildren(reply)
	if err == nil {
		s.noteStat(path, st)
	}
	return names, st, err
}

// Exists reports whether the znode at path exists and its Stat (nil when
// it does not; not an error).
func (s *Conn) Exists(ctx context.Context, path string) (bool, *zk.Stat, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.ReadRequest(xid, jute.OpExists, path, false)
	})
	if err != nil {
		return false, nil, err
	}
	st, err := decodeStat("exists", reply)
	switch {
	case err == nil:
		s.noteStat(path, st)
		return true, st, nil
	case errIsNoNode(err):
		s.wire.marks.gone(path)
		return false, nil, nil
	}
	return false, nil, err
}

// Create creates the znode at path with data, flags (zk.FlagEphemeral,
// zk.FlagSequence) and acl, and returns its path (with the sequence suffix
// the server added).
func (s *Conn) Create(ctx context.Context, path string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.CreateRequest(xid, jute.OpCreate, path, data, flags, acl)
	})
	if err != nil {
		return "", err
	}
	return decodePath("create", reply)
}

// Create2 is Create returning the new znode's Stat too (ZooKeeper 3.5+).
func (s *Conn) Create2(ctx context.Context, path string, data []byte, flags int32, acl []zk.ACL) (string, *zk.Stat, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.CreateRequest(xid, jute.OpCreate2, path, data, flags, acl)
	})
	if err != nil {
		return "", nil, err
	}
	created, st, err := decodeCreate2(reply)
	if err == nil {
		s.noteStat(created, st)
	}
	return created, st, err
}

// Delete deletes the znode at path if its version is version (-1: any).
func (s *Conn) Delete(ctx context.Context, path string, version int32) error {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.DeleteRequest(xid, path, version)
	})
	if err != nil {
		return err
	}
	err = decodeEmpty("delete", reply)
	if err == nil || errIsNoNode(err) {
		s.wire.marks.gone(path)
	}
	return err
}

// Set writes data to the znode at path if its version is version (-1:
// any), and returns its new Stat.
func (s *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*zk.Stat, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.SetDataRequest(xid, path, data, version)
	})
	if err != nil {
		return nil, err
	}
	return decodeStat("set data", reply)
}

// Sync asks the server the session is connected to to catch up with the
// quorum leader for path, and returns path. A read after it sees every
// write committed before the sync.
func (s *Conn) Sync(ctx context.Context, path string) (string, error) {
	reply, err := s.request(ctx, path, func(xid int32) []byte { return jute.SyncRequest(xid, path) })
	if err != nil {
		return "", err
	}
	return decodePath("sync", reply)
}

// Multi runs ops (go-zookeeper's *zk.CreateRequest, *zk.DeleteRequest,
// *zk.SetDataRequest, *zk.CheckVersionRequest, and *Create2Request, whose
// response carries the created znode's Stat) as one transaction, and
// returns one response per operation as go-zookeeper's Multi does: when
// the transaction failed, the error of the reply and each failed
// operation's error in its response. Any other operation type fails with
// ErrBadRequest before anything is sent.
func (s *Conn) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	call, frame, err := s.multiFrame(ops)
	if err != nil {
		return nil, err
	}
	reply, err := s.exchange(ctx, call, frame)
	if err != nil {
		return nil, err
	}
	return decodeMulti(reply)
}

// multiFrame checks ops and encodes them as one multi request.
func (s *Conn) multiFrame(ops []any) (*pendingCall, []byte, error) {
	for _, op := range ops {
		if p, ok := multiPath(op); !ok {
			return nil, nil, fmt.Errorf("multi: operation of type %T: %w", op, ErrBadRequest)
		} else if err := znode.CheckPath(p); err != nil {
			return nil, nil, err
		}
	}
	call := newPendingCall(s.wire.nextCallXid())
	frame, _, _ := jute.MultiRequest(call.xid, ops)
	return call, frame, nil
}

// RemoveWatches removes the session's watches of watcherType
// (jute.WatcherData, jute.WatcherChildren) on path from the server and
// waits for the answer; a *CodeError NOWATCHER when
// there was none. It does not touch the layer's table: a watch the table
// holds is removed by the table itself when its last user leaves.
func (s *Conn) RemoveWatches(ctx context.Context, path string, watcherType int32) error {
	reply, err := s.request(ctx, path, func(xid int32) []byte {
		return jute.RemoveWatchesRequest(xid, path, watcherType)
	})
	if err != nil {
		return err
	}
	return decodeEmpty("remove watches", reply)
}

// request checks path, encodes the request with a fresh xid, writes it
// once a connection is ready and waits for the reply.
func (s *Conn) request(ctx context.Context, path string, encode func(xid int32) []byte) ([]byte, error) {
	if err := znode.CheckPath(path); err != nil {
		return nil, err
	}
	call := newPendingCall(s.wire.nextCallXid())
	return s.exchange(ctx, call, encode(call.xid))
}

// multiPath returns the path of one of go-zookeeper's multi operations.
func multiPath(op any) (string, bool) {
	switch r := op.(type) {
	case *zk.CreateRequest:
		return r.Path, true
	case *Create2Request:
		return r.Path, true
	case *zk.DeleteRequest:
		return r.Path, true
	case *zk.SetDataRequest:
		return r.Path, true
	case *zk.CheckVersionRequest:
		return r.Path, true
	}
	return "", false
}

func errIsNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }
