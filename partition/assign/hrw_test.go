package assign_test

import (
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
)

// TestListDigestIsStable pins the shard-list digest members publish in
// their record: a release that changed it would split a fleet in a rolling
// upgrade into groups that each think the other runs another list.
func TestListDigestIsStable(t *testing.T) {
	for _, c := range []struct {
		ids  []string
		want string
	}{
		{shardRange(0, 3), "3-1c479731b4ce0717"},
		{[]string{"b", "a", "b"}, "2-224ca0b2bac1e88e"},
		{[]string{"a", "b"}, "2-224ca0b2bac1e88e"},
		{nil, "0-0000000000000000"},
	} {
		if got := assign.ListDigest(c.ids); got != c.want {
			t.Errorf("ListDigest(%q) = %s, want %s", c.ids, got, c.want)
		}
	}
}
