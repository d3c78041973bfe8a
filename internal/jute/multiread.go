package jute

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// multiRead (ZooKeeper 3.6+): many reads in one request, each answered on
// its own (a failed one fails alone, unlike a multi transaction).

// OpMultiRead is the op code of multiRead (ZooDefs.OpCode.multiRead).
const OpMultiRead int32 = 22

// MultiReadDataRequest encodes a multiRead of getData (no watch) on each
// of paths, in order.
func MultiReadDataRequest(xid int32, paths []string) []byte {
	return multiReadRequest(xid, OpGetData, paths)
}

// multiReadRequest encodes a multiRead of op (getData or getChildren, no
// watch) on each of paths, in order: each operation behind its header
// (type, done=false, err=-1), then the closing header (-1, true, -1).
func multiReadRequest(xid, op int32, paths []string) []byte {
	size := 0
	for _, p := range paths {
		size += 14 + len(p)
	}
	e := NewRequest(xid, OpMultiRead, size+9)
	for _, p := range paths {
		e.Int32(op)
		e.Bool(false)
		e.Int32(-1)
		e.String(p)
		e.Bool(false)
	}
	e.Int32(-1)
	e.Bool(true)
	e.Int32(-1)
	return e.Frame()
}

// DataResult is one getData's result in a multiRead reply: Data and Stat,
// or the error code it failed with (CodeOK when it did not).
type DataResult struct {
	Data []byte
	Stat *zk.Stat
	Err  Code
}

// MultiReadDataReply decodes the body of a multiRead reply of getData
// operations: one result per operation, each behind its header, up to
// the closing header.
func MultiReadDataReply(body []byte) ([]DataResult, error) {
	r := NewDecoder(body)
	var out []DataResult
	for {
		t, done, code := r.Int32(), r.Bool(), r.Int32()
		if r.bad || done {
			break
		}
		var res DataResult
		switch t {
		case OpError:
			res.Err = Code(r.Int32())
		case OpGetData:
			res.Data, res.Stat = r.Buffer(), r.Stat()
		default:
			return nil, fmt.Errorf("%w: multiRead result of type %d (code %d)", ErrMalformed, t, code)
		}
		out = append(out, res)
	}
	return out, r.Err()
}

// MultiReadChildrenRequest encodes a multiRead of getChildren (no watch)
// on each of paths, in order.
func MultiReadChildrenRequest(xid int32, paths []string) []byte {
	return multiReadRequest(xid, OpGetChildren, paths)
}

// ChildrenResult is one getChildren's result in a multiRead reply: the
// children's names, or the error code it failed with (CodeOK when it did
// not).
type ChildrenResult struct {
	Names []string
	Err   Code
}

// MultiReadChildrenReply decodes the body of a multiRead reply of
// getChildren operations.
func MultiReadChildrenReply(body []byte) ([]ChildrenResult, error) {
	r := NewDecoder(body)
	var out []ChildrenResult
	for {
		t, done, code := r.Int32(), r.Bool(), r.Int32()
		if r.bad || done {
			break
		}
		var res ChildrenResult
		switch t {
		case OpError:
			res.Err = Code(r.Int32())
		case OpGetChildren:
			res.Names = r.Strings()
		default:
			return nil, fmt.Errorf("%w: multiRead result of type %d (code %d)", ErrMalformed, t, code)
		}
		out = append(out, res)
	}
	return out, r.Err()
}
