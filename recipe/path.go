package recipe

import "strings"

// MaxPathBytes bounds an election path's length in bytes. ZooKeeper itself
// only bounds a request by jute.maxbuffer (1 MiB by default) and answers a
// longer one by dropping the connection; election paths are short names, so
// anything past this bound is refused as a mistake before it reaches the
// wire. Its node names are also bounded by the server's file system.
const MaxPathBytes = 4096

// validatePath checks an election path: absolute, at most MaxPathBytes, no
// trailing slash, no empty, "." or ".." segment, no character ZooKeeper's
// PathUtils refuses (control characters, surrogates and private use, and
// anything from U+FFF0 up: Java sends characters above U+FFFF as surrogate
// pairs), and outside the reserved /zookeeper tree. Errors are *PathError (errors.Is ErrInvalidPath).
func validatePath(p string) error {
	bad := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return bad("empty")
	case p[0] != '/':
		return bad("must be absolute (start with /)")
	case p == "/":
		return bad("the root cannot be an election path")
	case len(p) > MaxPathBytes:
		return bad("longer than MaxPathBytes (4096 bytes)")
	case strings.HasSuffix(p, "/"):
		return bad("trailing slash")
	case p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/"):
		return bad("the /zookeeper tree is reserved by ZooKeeper")
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "":
			return bad("empty segment (//)")
		case ".", "..":
			return bad("relative segment " + seg)
		}
	}
	for _, r := range p {
		if r == 0 || (r > 0 && r < 0x20) || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0xd800 && r <= 0xf8ff) || r >= 0xfff0 {
			return bad("character not allowed by ZooKeeper")
		}
	}
	return nil
}
