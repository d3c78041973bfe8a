package partition_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
)

// lineCounter is a log sink counting the lines that contain want.
type lineCounter struct {
	want []byte
	mu   sync.Mutex
	n    int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.want) {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return len(p), nil
}

func (c *lineCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// createPersistent creates each path as a persistent znode with data;
// one that exists already is fine.
func createPersistent(t *testing.T, conn *zk.Conn, data []byte, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := conn.Create(p, data, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

// TestPersistentZnodeUnderMembersIsNoMember: a persistent znode under
// <root>/members (an operator's, or another tool's) is not a live member.
// It was once counted as one forever: the shards the balance gave it were
// never led. The members log it once, and LiveMembers leaves it out too.
func TestPersistentZnodeUnderMembersIsNoMember(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 12)
	conn := connect(t, sessionTimeout).Conn()
	createPersistent(t, conn, nil, "/partition-test", root, root+"/members")
	createPersistent(t, conn, []byte("x"), root+"/members/ghost")
	warned := &lineCounter{want: []byte(root + "/members/ghost")}
	a := startMember(t, root, "a", shards, tr, func(c *partition.Config) { c.Logger = zerolog.New(warned) })
	b := startMember(t, root, "b", shards, tr)
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)

	live, err := partition.LiveMembers(t.Context(), a.sess, root)
	if want := map[string]int64{"a": a.sess.ID(), "b": b.sess.ID()}; err != nil || !maps.Equal(live, want) {
		t.Errorf("LiveMembers = %v, %v; want %v", live, err, want)
	}
	if n := warned.count(); n != 1 {
		t.Errorf("the persistent znode under members was logged %d times, want once", n)
	}
	tr.check(t, false)
}

// TestOwnersReportsAPersistentZnodeAsStuck: a persistent sequential znode
// first in a shard's election (an operator's lock-0000000000) keeps that
// shard unled, and is left alone; Owners once reported its data as the
// leading member's id. It now reports no leader and names the znode as
// Stuck. The other shards are led as usual.
func TestOwnersReportsAPersistentZnodeAsStuck(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 4)
	conn := connect(t, sessionTimeout).Conn()
	createPersistent(t, conn, nil, "/partition-test", root, root+"/shards", root+"/shards/1")
	lock, err := conn.Create(root+"/shards/1/lock-", []byte("operator"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	a := startMember(t, root, "a", shards, tr)
	b := startMember(t, root, "b", shards, tr)
	waitFor(t, 20*time.Second, "every shard but the stuck one led", func() (bool, string) {
		lead := leaders(t, []*member{a, b})
		_, stuck := lead["1"]
		return len(lead) == 3 && !stuck, fmt.Sprint(lead)
	})
	owners, err := partition.Owners(t.Context(), a.sess, root)
	if err != nil {
		t.Fatal(err)
	}
	if o := owners["1"]; o.Member != "" || o.Token != 0 || o.Stuck != lock || slices.Contains(o.Standbys, "operator") {
		t.Errorf("Owners[1] = %+v, want no leader, Stuck %s", o, lock)
	}
	for _, s := range []string{"0", "2", "3"} {
		if o := owners[s]; o.Member == "" || o.Stuck != "" {
			t.Errorf("Owners[%s] = %+v, want a leader and nothing stuck", s, o)
		}
	}
	if ok, _, err := conn.Exists(lock); err != nil || !ok {
		t.Errorf("the persistent znode was deleted (exists %v, %v)", ok, err)
	}
	tr.check(t, false)
}
