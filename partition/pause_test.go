package partition_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPausedMemberReportsSessionExpired pauses a member's process (SIGSTOP)
// until ZooKeeper has expired its session, then resumes it: every
// OnStoppedLeading reports recipe.ErrSessionExpired (what happened), not
// ErrSuspended, and the znodes ZooKeeper deleted at expiry are not logged as
// deleted by someone else.
func TestPausedMemberReportsSessionExpired(t *testing.T) {
	const n = 4
	tr, root := newTracker(), newRoot(t)
	child := startChild(t, "p", root, n, tr.serve(t))
	waitFor(t, 30*time.Second, "the child to lead every shard", func() (bool, string) {
		s := tr.startsOf("p")
		return s == n, fmt.Sprintf("%d of %d started", s, n)
	})
	conn := connect(t, sessionTimeout).Conn()
	if err := child.Pause(); err != nil {
		t.Fatalf("pause child: %v", err)
	}
	waitFor(t, 30*time.Second, "ZooKeeper to expire the paused child's session (its member znode gone)", func() (bool, string) {
		ok, _, err := conn.Exists(path.Join(root, "members", "p"))
		return err == nil && !ok, fmt.Sprintf("exists %v, err %v", ok, err)
	})
	if err := child.Resume(); err != nil {
		t.Fatalf("resume child: %v", err)
	}
	waitFor(t, 30*time.Second, "the child to report every shard stopped", func() (bool, string) {
		r := tr.reasonsOf("p")
		return len(r) >= n, fmt.Sprintf("reasons so far %v", r)
	})
	if r := tr.reasonsOf("p"); slices.ContainsFunc(r, func(s string) bool { return s != "session_expired" }) {
		t.Errorf("OnStoppedLeading reasons after a pause past the session timeout: %v, want all session_expired", r)
	}
	waitFor(t, 30*time.Second, "the child to lead every shard again", func() (bool, string) {
		s := tr.startsOf("p")
		return s == 2*n, fmt.Sprintf("%d of %d started", s, 2*n)
	})
	if out := child.Output(); strings.Contains(out, "deleted by someone else") {
		t.Errorf("a znode ZooKeeper deleted at session expiry was logged as deleted by someone else:\n%s", out)
	}
	tr.check(t, false)
}
