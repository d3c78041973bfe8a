package partition_test

import (
	"errors"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestPausedLeadersSuccessorsOverlapOnlyItsCallbacks: a member process
// (child c) leading shards of a bucketed root is paused (SIGSTOP) until
// ZooKeeper has expired its session, so b leads its shards while c's
// callbacks have not returned and its OnStoppedLeading has not been
// called: c's leaderships overlap b's by their callback times, as a member
// starved past its session timeout on a loaded machine does. Every such
// overlap is of a leadership whose znode ZooKeeper had deleted (checked at
// b's start), and once c resumes the guard accepts none of its late writes:
// the fencing token, not the callbacks' times, is the measure of safety.
func TestPausedLeadersSuccessorsOverlapOnlyItsCallbacks(t *testing.T) {
	const n = 20
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, n)
	sess := connect(t, sessionTimeout)
	tr.checkZnodes(t)
	child := startChild(t, "c", root, n, tr.serve(t))
	b := startMember(t, root, "b", shards, tr)
	waitFor(t, 30*time.Second, "c and b balanced, per ZooKeeper", balancedPerOwners(t, sess, root, shards, 2))
	cLed := ledBy(t, sess, root, "c") // c's leaderships the pause leaves open: each overlaps b's start of its shard
	if err := child.Pause(); err != nil {
		t.Fatalf("pause child: %v", err)
	}
	waitFor(t, 30*time.Second, "ZooKeeper to expire the paused child's session (its member znode gone)", func() (bool, string) {
		ok, _, err := sess.Conn().Exists(path.Join(root, "members", "c"))
		return err == nil && !ok, fmt.Sprintf("exists %v, err %v", ok, err)
	})
	waitFor(t, 30*time.Second, "b to lead every shard while c is paused", func() (bool, string) {
		l := len(b.m.Leaderships())
		return l == n, fmt.Sprintf("b leads %d of %d", l, n)
	})
	if err := child.Resume(); err != nil {
		t.Fatalf("resume child: %v", err)
	}
	waitFor(t, 30*time.Second, "the child to report its leaderships stopped", func() (bool, string) {
		r, s := len(tr.reasonsOf("c")), tr.startsOf("c")
		return r >= s, fmt.Sprintf("%d of %d stopped", r, s)
	})
	tr.check(t, false)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.overlaps < cLed || tr.gone < cLed {
		t.Errorf("%d starts overlapped c's callbacks, %d of them checked with c's znode gone; want each of c's %d leaderships", tr.overlaps, tr.gone, cLed)
	}
}

// balancedPerOwners is a waitFor condition: the leaders Owners reads from
// ZooKeeper balance shards over n members (members in child processes
// too, which the test cannot ask).
func balancedPerOwners(t *testing.T, sess *recipe.Session, root string, shards []string, n int) func() (bool, string) {
	return func() (bool, string) {
		owners, err := partition.Owners(t.Context(), sess, root)
		if err != nil {
			return false, err.Error()
		}
		lead := map[string]string{}
		for s, o := range owners {
			if o.Member != "" {
				lead[s] = o.Member
			}
		}
		return balanced(shards, lead, n)
	}
}

// ledBy returns how many shards member leads, per ZooKeeper (Owners).
func ledBy(t *testing.T, sess *recipe.Session, root, member string) int {
	t.Helper()
	owners, err := partition.Owners(t.Context(), sess, root)
	if err != nil {
		t.Fatalf("Owners: %v", err)
	}
	n := 0
	for _, o := range owners {
		if o.Member == member {
			n++
		}
	}
	return n
}

// checkZnodes has tr check, at each overlapping start, that the overlapped
// leaderships' znodes are gone, on a session of its own whose timeout (10 s)
// outlasts a loaded machine's stalls (a 1 s session expired under load
// leaves the check undone).
func (tr *tracker) checkZnodes(t *testing.T) {
	t.Helper()
	tr.zk = connect(t, 10*time.Second).Conn()
}

// overlapOf classifies a start that overlapped other leaderships of
// shard whose OnStoppedLeading had not returned. One whose znode is gone
// (ZooKeeper expired its session, or it resigned) is expected: its member
// has not learned it yet or is still calling back, and the fencing token
// keeps its late writes out (the guard's check). One whose znode still
// exists is two leaders of one shard at once, a violation: in one
// election ZooKeeper orders the next leader after that znode's deletion,
// so it can only be a second election of the shard.
func (tr *tracker) overlapOf(shard string, others map[string]held) {
	if len(others) == 0 {
		return
	}
	defer func() { tr.mu.Lock(); tr.pending--; tr.mu.Unlock() }()
	for member, h := range others {
		if h.znode == "" {
			continue
		}
		var ended error = errUnknownEnd
		if h.lead != nil {
			ended = h.lead.Err()
		}
		live, checked := false, error(nil)
		if tr.zk != nil {
			// Sync first: a read of a follower that lags the deletion
			// would report the znode as still there.
			_, xerr := tr.zk.Sync(h.znode)
			ok := false
			if xerr == nil {
				ok, _, xerr = tr.zk.Exists(h.znode)
			}
			live, checked = ok && xerr == nil, xerr
		}
		tr.event(shard, "%s's leadership %s when the next started: ended %v, znode exists %v (%v)", member, h.znode, ended, live, checked)
		tr.mu.Lock()
		switch {
		case live:
			tr.violations = append(tr.violations, fmt.Sprintf("shard %s: a leader started while %s's znode %s still existed (its leadership: %v)", shard, member, h.znode, ended))
		case tr.zk != nil && checked == nil:
			tr.gone++
		}
		tr.mu.Unlock()
	}
}

// errUnknownEnd stands for the state of a child process's leadership.
var errUnknownEnd = errors.New("not known (a child process)")
