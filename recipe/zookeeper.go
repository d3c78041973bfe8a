package recipe

import (
	"context"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper's operations on the session, each bounded by its ctx. They are
// how the packages of this module (partition, zxidfence's guard through
// its ZooKeeperSession interface, cmd) reach ZooKeeper: the connection
// layer writes each request itself, so a call whose ctx ends holds
// nothing, replies advance the session's last-seen zxid, and errors follow
// one table (zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion,
// zk.ErrNoAuth, ...; an error wrapping zk.ErrConnectionClosed when the
// outcome is unknown; ErrSessionClosed after Close; a *PathError for a
// path ZooKeeper refuses; ctx's error). Use Retryable to tell a transient
// error from a final one. While the session is disconnected a call waits
// for the next connection, at most the session timeout. Like
// go-zookeeper's, the errors do not name the path.
//
// Get, Children and Exists are reads, which are idempotent: a transient
// answer (Retryable: a connection lost before the reply, a throttled
// request) is asked again, backing off, for up to twice the session
// timeout from the first attempt while ctx lives; after that the last
// attempt's error is returned. The writes are attempted once: whether a
// write whose reply was lost took effect is for the caller to find out.

// Get returns the data and Stat of the znode at path.
func (s *Session) Get(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	if s == nil {
		return nil, nil, ErrNilSession
	}
	var data []byte
	var st *zk.Stat
	err := s.read(ctx, func() (err error) {
		data, st, err = s.conn.Get(ctx, path)
		return err
	})
	return data, st, err
}

// Children returns the names of the children of the znode at path and its
// Stat.
func (s *Session) Children(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	if s == nil {
		return nil, nil, ErrNilSession
	}
	var names []string
	var st *zk.Stat
	err := s.read(ctx, func() (err error) {
		names, st, err = s.conn.Children(ctx, path)
		return err
	})
	return names, st, err
}

// Exists reports whether the znode at path exists, and its Stat (nil when
// it does not).
func (s *Session) Exists(ctx context.Context, path string) (bool, *zk.Stat, error) {
	if s == nil {
		return false, nil, ErrNilSession
	}
	var ok bool
	var st *zk.Stat
	err := s.read(ctx, func() (err error) {
		ok, st, err = s.conn.Exists(ctx, path)
		return err
	})
	return ok, st, err
}

// Create creates the znode at path with data, flags (zk.FlagEphemeral,
// zk.FlagSequence; an ephemeral znode belongs to this session) and acl,
// and returns its path, with the sequence suffix the server added.
func (s *Session) Create(ctx context.Context, path string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	if s == nil {
		return "", ErrNilSession
	}
	p, err := s.conn.Create(ctx, path, data, flags, acl)
	return p, fromLayer(err)
}

// Delete deletes the znode at path if its version is version (-1: any).
func (s *Session) Delete(ctx context.Context, path string, version int32) error {
	if s == nil {
		return ErrNilSession
	}
	return fromLayer(s.conn.Delete(ctx, path, version))
}

// Set writes data to the znode at path if its version is version (-1:
// any) and returns its new Stat.
func (s *Session) Set(ctx context.Context, path string, data []byte, version int32) (*zk.Stat, error) {
	if s == nil {
		return nil, ErrNilSession
	}
	st, err := s.conn.Set(ctx, path, data, version)
	return st, fromLayer(err)
}

// Multi runs ops (*zk.CreateRequest, *zk.DeleteRequest, *zk.SetDataRequest,
// *zk.CheckVersionRequest) as one transaction and returns one response per
// operation, as go-zookeeper's Multi does: when the transaction failed, the
// reply's error, and each failed operation's in its response.
func (s *Session) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if s == nil {
		return nil, ErrNilSession
	}
	res, err := s.conn.Multi(ctx, ops...)
	return res, fromLayer(err)
}

// Sync makes the server the session is connected to catch up with the
// quorum leader for path: a read after it sees every write committed
// before the sync.
func (s *Session) Sync(ctx context.Context, path string) error {
	if s == nil {
		return ErrNilSession
	}
	_, err := s.conn.Sync(ctx, path)
	return fromLayer(err)
}

// GetW returns the data and Stat of the znode at path and a channel that
// receives one event when the znode's data changes or it is deleted
// (zk.EventNodeDataChanged, zk.EventNodeDeleted), or zk.EventNotWatching
// when the watch is lost with the connection (Event.State is
// zk.StateDisconnected or zk.StateExpired, Event.Err says why); the channel
// is then closed. ctx bounds the call and the watch: once it ends before an
// event, the watch is forgotten (and removed from the server) and the
// channel receives nothing. While the session is disconnected the call
// waits for the next connection, at most the session timeout.
//
// Errors are go-zookeeper's (errors.Is zk.ErrNoNode: no watch is left
// then; zk.ErrConnectionClosed: the connection dropped or no connection
// came within the session timeout), ErrACLDenied, ErrSessionClosed,
// ErrNilSession, ErrInvalidPath (a path ZooKeeper refuses; the /zookeeper
// tree is readable), or ctx's error.
func (s *Session) GetW(ctx context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	if s == nil {
		return nil, nil, nil, ErrNilSession
	}
	data, st, ch, err := s.conn.GetW(ctx, path)
	return data, st, ch, denied(fromLayer(err))
}

// ChildrenW returns the names of the children of the znode at path, its
// Stat, and a channel that receives one event when a child is created or
// deleted or the znode is deleted (zk.EventNodeChildrenChanged,
// zk.EventNodeDeleted), or zk.EventNotWatching as for GetW. ctx and errors
// are as for GetW.
func (s *Session) ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	if s == nil {
		return nil, nil, nil, ErrNilSession
	}
	names, st, ch, err := s.conn.ChildrenW(ctx, path)
	return names, st, ch, denied(fromLayer(err))
}

// ExistsW reports whether the znode at path exists, its Stat (nil when it
// does not), and a channel that receives one event when it is created,
// changed or deleted (zk.EventNodeCreated, zk.EventNodeDataChanged,
// zk.EventNodeDeleted), or zk.EventNotWatching as for GetW. A missing
// znode is not an error: the watch is set and fires on its creation. ctx
// and errors are as for GetW.
func (s *Session) ExistsW(ctx context.Context, path string) (bool, *zk.Stat, <-chan zk.Event, error) {
	if s == nil {
		return false, nil, nil, ErrNilSession
	}
	ok, st, ch, err := s.conn.ExistsW(ctx, path)
	return ok, st, ch, denied(fromLayer(err))
}
