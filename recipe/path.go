package recipe

import "strings"

// validatePath checks an election path: absolute, no trailing slash, no
// empty, "." or ".." segment, no control characters, and outside the
// reserved /zookeeper tree. Errors are *PathError (errors.Is ErrInvalidPath).
func validatePath(p string) error {
	bad := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return bad("empty")
	case p[0] != '/':
		return bad("must be absolute (start with /)")
	case p == "/":
		return bad("the root cannot be an election path")
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
			(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return bad("character not allowed by ZooKeeper")
		}
	}
	return nil
}
