package cli

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestRootStatusNamesAPersistentZnode: status of a partition root says a
// shard is stuck behind a persistent znode (an operator's lock), instead of
// showing the znode's data as its leader.
func TestRootStatusNamesAPersistentZnode(t *testing.T) {
	s, root := testSession(t), testPath(t)
	for _, p := range []string{path.Dir(root), root, root + "/shards", root + "/shards/0"} {
		if _, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	lock, err := s.Conn().Create(root+"/shards/0/lock-", []byte("operator"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	st, err := rootStatusOf(t.Context(), s, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Shards) != 1 || st.Shards[0].Leader != "" || st.Shards[0].Stuck != lock {
		t.Errorf("root status = %+v, want shard 0 without a leader, stuck behind %s", st.Shards, lock)
	}
	var out strings.Builder
	if err := st.write(&out, "text"); err != nil {
		t.Fatal(err)
	}
	if want := "(none: stuck behind persistent " + lock + ")"; !strings.Contains(out.String(), want) {
		t.Errorf("status text lacks %q:\n%s", want, out.String())
	}
}

// TestRootStatusEscapesWhatTheRootHolds forges, as anyone holding the
// group's credentials could, a live member whose record's address carries
// terminal escapes (clear the screen, set the title) and a drain reason
// with a newline that would forge a line of the members' table: status
// --root prints neither raw.
func TestRootStatusEscapesWhatTheRootHolds(t *testing.T) {
	s, root := testSession(t), testPath(t)
	open := zk.WorldACL(zk.PermAll)
	for _, p := range []string{path.Dir(root), root, root + "/shards", root + "/shards/0", root + "/members", root + "/owners"} {
		if _, err := s.Conn().Create(p, nil, 0, open); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	const forgedAddr = "\x1b[2J\x1b]0;owned\a10.0.0.9:80"
	const forgedReason = "maintenance\nghost  64  1  10.6.6.6:80  live"
	rec := fmt.Sprintf(`{"session":%d,"leading":{"0":1},"address":%q,"labels":{"zone":"eu\u001b[31m"}}`, s.ID(), forgedAddr)
	op := fmt.Sprintf(`{"drained":{"evil":{"since":"2026-01-01T00:00:00Z","reason":%q}},"freeze":{"since":"2026-01-01T00:00:00Z","reason":"\u001b]0;frozen\u0007"}}`, forgedReason)
	for _, c := range []struct {
		p     string
		data  string
		flags int32
	}{{root + "/members/evil", "", zk.FlagEphemeral}, {root + "/owners/evil", rec, 0}, {root + "/operator", op, 0}} {
		if _, err := s.Conn().Create(c.p, []byte(c.data), c.flags, open); err != nil {
			t.Fatalf("create %s: %v", c.p, err)
		}
	}
	st, err := rootStatusOf(t.Context(), s, root)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := st.write(&out, "table"); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for i, r := range text {
		if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
			t.Fatalf("status prints control character %U at byte %d:\n%q", r, i, text)
		}
	}
	if strings.Contains(text, "\nghost") {
		t.Errorf("the drain reason's newline forged a table line:\n%s", text)
	}
	if want := `drained: maintenance\nghost`; !strings.Contains(text, want) {
		t.Errorf("status lacks the escaped drain reason %q:\n%s", want, text)
	}
}
