package znode

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidPath: a path ZooKeeper would refuse (see CheckPath), or one
// the recipe refuses as an election path (the root, the /zookeeper tree);
// recipe exports it as recipe.ErrInvalidPath, hence its prefix.
var ErrInvalidPath = errors.New("recipe: invalid path")

// PathError is a refused path and why (Reason says whether ZooKeeper or
// the recipe refuses it). recipe exports it as recipe.PathError.
type PathError struct {
	Path   string
	Reason string
}

// Error names the path, cut to its first 64 bytes when longer, and the
// reason.
func (e *PathError) Error() string {
	p := e.Path
	if len(p) > 64 {
		p = p[:64] + "..."
	}
	return fmt.Sprintf("recipe: invalid path %q: %s", p, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidPath) true.
func (e *PathError) Unwrap() error { return ErrInvalidPath }

// CheckPath checks a znode path as ZooKeeper's PathUtils does: absolute,
// no trailing slash (but "/"), no empty, "." or ".." segment, and no
// character ZooKeeper refuses (control characters, surrogates and private
// use, and anything from U+FFF0 up: Java sends characters above U+FFFF as
// surrogate pairs). The /zookeeper tree is a path like any other here.
// Errors are *PathError (errors.Is ErrInvalidPath).
func CheckPath(p string) error {
	bad := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return bad("empty")
	case p[0] != '/':
		return bad("must be absolute (start with /)")
	case p == "/":
		return nil
	case strings.HasSuffix(p, "/"):
		return bad("trailing slash")
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
		if RefusedRune(r) {
			return bad("character not allowed by ZooKeeper")
		}
	}
	return nil
}

// RefusedRune reports whether ZooKeeper refuses r in a path: control
// characters, U+D800–U+F8FF, U+FFF0–U+FFFF, and every character above
// U+FFFF (the server checks UTF-16 code units, and those are surrogate
// pairs).
func RefusedRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0xd800 && r <= 0xf8ff) || r >= 0xfff0
}
