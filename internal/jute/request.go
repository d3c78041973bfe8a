package jute

import (
	"encoding/binary"

	"github.com/go-zookeeper/zk"
)

// Encoder builds one request frame: the length prefix (set by Frame), the
// header (xid, op), then the body's fields in order.
type Encoder struct{ b []byte }

// NewRequest starts a request frame with xid and op; size is a hint of the
// body's length.
func NewRequest(xid, op int32, size int) *Encoder {
	e := &Encoder{b: make([]byte, 4, 12+size)}
	e.Int32(xid)
	e.Int32(op)
	return e
}

// Int32 appends a big-endian int32.
func (e *Encoder) Int32(v int32) { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }

// Int64 appends a big-endian int64.
func (e *Encoder) Int64(v int64) { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }

// Bool appends a one-byte boolean.
func (e *Encoder) Bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// String appends a length-prefixed string.
func (e *Encoder) String(s string) {
	e.Int32(int32(len(s)))
	e.b = append(e.b, s...)
}

// Buffer appends a length-prefixed byte string; nil is a null buffer (-1).
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(b)))
	e.b = append(e.b, b...)
}

// ACL appends a vector of ACL entries.
func (e *Encoder) ACL(acl []zk.ACL) {
	e.Int32(int32(len(acl)))
	for _, a := range acl {
		e.Int32(a.Perms)
		e.String(a.Scheme)
		e.String(a.ID)
	}
}

// Frame sets the length prefix and returns the frame.
func (e *Encoder) Frame() []byte {
	binary.BigEndian.PutUint32(e.b, uint32(len(e.b)-4))
	return e.b
}

// ReadRequest encodes a request made of a path and a watch flag: exists,
// getData, getChildren2.
func ReadRequest(xid, op int32, path string, watch bool) []byte {
	e := NewRequest(xid, op, 5+len(path))
	e.String(path)
	e.Bool(watch)
	return e.Frame()
}

// RemoveWatchesRequest encodes removeWatches(path, watcherType).
func RemoveWatchesRequest(xid int32, path string, watcherType int32) []byte {
	e := NewRequest(xid, OpRemoveWatches, 8+len(path))
	e.String(path)
	e.Int32(watcherType)
	return e.Frame()
}

// CreateRequest encodes create or create2 (op): path, data, ACL, flags.
func CreateRequest(xid, op int32, path string, data []byte, flags int32, acl []zk.ACL) []byte {
	e := NewRequest(xid, op, 64+len(path)+len(data))
	e.create(path, data, flags, acl)
	return e.Frame()
}

func (e *Encoder) create(path string, data []byte, flags int32, acl []zk.ACL) {
	e.String(path)
	e.Buffer(data)
	e.ACL(acl)
	e.Int32(flags)
}

// DeleteRequest encodes delete(path, version); version -1 matches any.
func DeleteRequest(xid int32, path string, version int32) []byte {
	e := NewRequest(xid, OpDelete, 8+len(path))
	e.String(path)
	e.Int32(version)
	return e.Frame()
}

// SetDataRequest encodes setData(path, data, version).
func SetDataRequest(xid int32, path string, data []byte, version int32) []byte {
	e := NewRequest(xid, OpSetData, 12+len(path)+len(data))
	e.String(path)
	e.Buffer(data)
	e.Int32(version)
	return e.Frame()
}

// SyncRequest encodes sync(path).
func SyncRequest(xid int32, path string) []byte {
	e := NewRequest(xid, OpSync, 4+len(path))
	e.String(path)
	return e.Frame()
}

// Create2Request is a create2 operation inside a multi (ZooKeeper 3.5+):
// its result carries the created znode's Stat (czxid, ephemeralOwner),
// where a create's carries only the path. go-zookeeper has no such type.
type Create2Request struct {
	Path  string
	Data  []byte
	Acl   []zk.ACL
	Flags int32
}

// MultiRequest encodes multi: each operation behind its header (type,
// done=false, err=-1), then the closing header (-1, true, -1). ops are
// go-zookeeper's request types (*zk.CreateRequest, *zk.DeleteRequest,
// *zk.SetDataRequest, *zk.CheckVersionRequest) and *Create2Request. ok is
// false on any other.
func MultiRequest(xid int32, ops []any) (frame []byte, types []int32, ok bool) {
	e := NewRequest(xid, OpMulti, 64*len(ops))
	types = make([]int32, 0, len(ops))
	for _, op := range ops {
		t, ok := e.multiOp(op)
		if !ok {
			return nil, nil, false
		}
		types = append(types, t)
	}
	e.Int32(-1)
	e.Bool(true)
	e.Int32(-1)
	return e.Frame(), types, true
}

// multiOp appends one operation of a multi with its header.
func (e *Encoder) multiOp(op any) (int32, bool) {
	head := func(t int32) { e.Int32(t); e.Bool(false); e.Int32(-1) }
	switch r := op.(type) {
	case *zk.CreateRequest:
		head(OpCreate)
		e.create(r.Path, r.Data, r.Flags, r.Acl)
		return OpCreate, true
	case *Create2Request:
		head(OpCreate2)
		e.create(r.Path, r.Data, r.Flags, r.Acl)
		return OpCreate2, true
	case *zk.DeleteRequest:
		head(OpDelete)
		e.String(r.Path)
		e.Int32(r.Version)
		return OpDelete, true
	case *zk.SetDataRequest:
		head(OpSetData)
		e.String(r.Path)
		e.Buffer(r.Data)
		e.Int32(r.Version)
		return OpSetData, true
	case *zk.CheckVersionRequest:
		head(OpCheck)
		e.String(r.Path)
		e.Int32(r.Version)
		return OpCheck, true
	}
	return 0, false
}
