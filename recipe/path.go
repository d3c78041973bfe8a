package recipe

import (
	"strings"

	"github.com/zkelect/zkelect/internal/znode"
)

// MaxPathBytes bounds an election path's length in bytes. ZooKeeper itself
// only bounds a request by jute.maxbuffer (1 MiB by default) and answers a
// longer one by dropping the connection; election paths are short names, so
// anything past this bound is refused as a mistake before it reaches the
// wire. Its node names are also bounded by the server's file system.
const MaxPathBytes = 4096

// validatePath checks an election path: a path ZooKeeper accepts (see
// znode.CheckPath: absolute, no trailing slash, no empty, "." or ".."
// segment, no character ZooKeeper's PathUtils refuses), not the root, at
// most MaxPathBytes, and outside the reserved /zookeeper tree. Errors are
// *PathError (errors.Is ErrInvalidPath).
func validatePath(p string) error {
	bad := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	if p == "" || p[0] != '/' {
		return fromLayer(znode.CheckPath(p))
	}
	switch {
	case p == "/":
		return bad("the root cannot be an election path")
	case len(p) > MaxPathBytes:
		return bad("longer than MaxPathBytes (4096 bytes)")
	}
	if err := znode.CheckPath(p); err != nil {
		return fromLayer(err)
	}
	if p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") {
		return bad("the /zookeeper tree is reserved by ZooKeeper")
	}
	return nil
}
