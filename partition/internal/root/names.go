package root

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zkelect/zkelect/internal/znode"
)

// MaxIDLength is the longest shard or member id accepted, in bytes. Ids are
// znode names; ZooKeeper itself accepts longer ones, but every znode path is
// sent on every request and stored in every watch, so ids stay short.
const MaxIDLength = 255

// Range returns the shard ids "lo", "lo+1", …, "hi-1" in decimal, e.g.
// Range(0, 3) is ["0" "1" "2"]. It returns nil when hi <= lo.
func Range(lo, hi int) []string {
	if hi <= lo {
		return nil
	}
	ids := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ids = append(ids, strconv.Itoa(i))
	}
	return ids
}

// ValidateID returns a *ShardIDError if id cannot be used as a shard or
// member id: empty, "." or "..", longer than MaxIDLength bytes, not UTF-8,
// or containing '/' or a character ZooKeeper refuses in a path: a control
// character (U+0000–U+001F, U+007F–U+009F), U+D800–U+F8FF, U+FFF0–U+FFFF,
// or any character above U+FFFF (ZooKeeper checks UTF-16 code units, and
// such a character is a surrogate pair, e.g. an emoji).
func ValidateID(id string) error {
	switch {
	case id == "":
		return &ShardIDError{ID: id, Reason: "is empty"}
	case id == "." || id == "..":
		return &ShardIDError{ID: id, Reason: "is a relative path element"}
	case len(id) > MaxIDLength:
		return &ShardIDError{ID: id, Reason: fmt.Sprintf("is %d bytes, over the limit of %d", len(id), MaxIDLength)}
	case !utf8.ValidString(id):
		return &ShardIDError{ID: id, Reason: "is not valid UTF-8"}
	case strings.ContainsRune(id, '/'):
		return &ShardIDError{ID: id, Reason: "contains '/'"}
	}
	for _, r := range id {
		if znode.RefusedRune(r) {
			return &ShardIDError{ID: id, Reason: fmt.Sprintf("contains the forbidden character %U", r)}
		}
	}
	return nil
}

// ValidateShards checks every id and that none repeats.
func ValidateShards(ids []string) error {
	seen := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return err
		}
		if _, dup := seen[id]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicateShard, id)
		}
		seen[id] = struct{}{}
	}
	return nil
}

// ValidateRoot checks that root is an absolute, clean znode path other than
// "/" and outside /zookeeper, with valid elements.
func ValidateRoot(root string) error {
	if root == "" || root[0] != '/' || root == "/" || path.Clean(root) != root {
		return fmt.Errorf("%w: %q must be an absolute clean path other than \"/\"", ErrInvalidRoot, root)
	}
	if root == "/zookeeper" || strings.HasPrefix(root, "/zookeeper/") {
		return fmt.Errorf("%w: %q is in ZooKeeper's reserved /zookeeper tree", ErrInvalidRoot, root)
	}
	for _, el := range strings.Split(root[1:], "/") {
		if err := ValidateID(el); err != nil {
			return fmt.Errorf("%w: %q: %w", ErrInvalidRoot, root, err)
		}
	}
	return nil
}
