package zxidfence

import (
	"context"
	"reflect"

	"github.com/go-zookeeper/zk"
)

// The ZooKeeper clients the ZooKeeper guard writes through.

// ZooKeeperSession is the ZooKeeper client the guard writes through, every
// call bounded by its ctx; *recipe.Session satisfies it. Errors are
// go-zookeeper's (zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, ...).
type ZooKeeperSession interface {
	Get(ctx context.Context, path string) ([]byte, *zk.Stat, error)
	Create(ctx context.Context, path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	Set(ctx context.Context, path string, data []byte, version int32) (*zk.Stat, error)
	Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error)
}

// ZooKeeperConn is the same client in go-zookeeper's shape, without
// contexts; *zk.Conn satisfies it.
type ZooKeeperConn interface {
	Get(path string) ([]byte, *zk.Stat, error)
	Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	Set(path string, data []byte, version int32) (*zk.Stat, error)
	Multi(ops ...any) ([]zk.MultiResponse, error)
}

// isNilPointer reports whether v holds a nil pointer.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// withoutContext runs a ZooKeeperConn's calls once ctx is checked: a
// request in flight is bounded by the connection's own timeouts.
type withoutContext struct{ c ZooKeeperConn }

func (w withoutContext) Get(ctx context.Context, p string) ([]byte, *zk.Stat, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return w.c.Get(p)
}

func (w withoutContext) Create(ctx context.Context, p string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return w.c.Create(p, data, flags, acl)
}

func (w withoutContext) Set(ctx context.Context, p string, data []byte, version int32) (*zk.Stat, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return w.c.Set(p, data, version)
}

func (w withoutContext) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return w.c.Multi(ops...)
}
