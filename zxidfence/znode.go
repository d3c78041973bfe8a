package zxidfence

import (
	"encoding/binary"
	"fmt"

	"github.com/zkelect/zkelect/internal/znode"
)

// Layout of a znode written by the ZooKeeper guard:
//
//	bytes 0..3    magic "ZXF1"
//	bytes 4..11   generation, uint64 big-endian
//	bytes 12..19  fencing token (zxid), uint64 big-endian
//	bytes 20..    the writer's data, unchanged
//
// A znode with no data at all counts as fenced with the zero Fence, so a
// target created empty by an operator can be taken over.
const (
	znodeMagic = "ZXF1"
	// ZnodeHeaderSize is the length of the header the ZooKeeper guard puts
	// before the data of a target znode.
	ZnodeHeaderSize = len(znodeMagic) + 2*BinarySize
)

// AppendZnodeData appends to dst the bytes the ZooKeeper guard stores in a
// target znode: the header for fence f, then data.
func AppendZnodeData(dst []byte, f Fence, data []byte) []byte {
	dst = append(dst, znodeMagic...)
	dst = binary.BigEndian.AppendUint64(dst, f.Generation)
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.Token))
	return append(dst, data...)
}

// ParseZnodeData splits a target znode's bytes into the fence of its last
// write and the writer's data (a sub-slice of b). Empty b yields the zero
// Fence and nil data; anything else without the header returns an error
// wrapping ErrNotFenced.
func ParseZnodeData(b []byte) (Fence, []byte, error) {
	if len(b) == 0 {
		return Fence{}, nil, nil
	}
	if len(b) < ZnodeHeaderSize || string(b[:len(znodeMagic)]) != znodeMagic {
		return Fence{}, nil, fmt.Errorf("%w: %d bytes without the %q header", ErrNotFenced, len(b), znodeMagic)
	}
	h := b[len(znodeMagic):]
	f := Fence{
		Generation: binary.BigEndian.Uint64(h[:BinarySize]),
		Token:      Token(binary.BigEndian.Uint64(h[BinarySize : 2*BinarySize])),
	}
	return f, b[ZnodeHeaderSize:], nil
}

// validZnodePath checks a path as ZooKeeper does (the connection layer's
// rule): absolute, no empty, "." or ".." segment, no trailing slash (except
// the root), no character ZooKeeper refuses.
func validZnodePath(p string) error {
	if err := znode.CheckPath(p); err != nil {
		return fmt.Errorf("%w: znode path %q", ErrInvalidKey, p)
	}
	return nil
}
