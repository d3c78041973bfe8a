package partition_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
)

// watchTable is the server's watch table, read with the four-letter words
// wchc (data and exists watches per session) and mntr (all watches).
type watchTable struct {
	data     map[int64][]string // session → watched paths
	children int                // child watches, all sessions
}

// readWatchTable reads the table; the total is read before and after the
// list until it is the same, so a watch set meanwhile is not taken for a
// child watch.
func readWatchTable(t *testing.T) watchTable {
	t.Helper()
	for {
		before := watchCount(t)
		data, err := zkc.Wchc(t.Context(), 0)
		if err != nil {
			t.Fatalf("wchc: %v", err)
		}
		w := watchTable{data: data}
		n := 0
		for _, ps := range data {
			n += len(ps)
		}
		if after := watchCount(t); after == before {
			w.children = after - n
			return w
		}
	}
}

// watchCount returns mntr's zk_watch_count.
func watchCount(t *testing.T) int {
	t.Helper()
	n, err := zkc.Mntr(t.Context(), 0, "zk_watch_count")
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// clientWatchers returns how many watch channels go-zookeeper holds on
// conn: when it holds any, its reconnect re-sets them (sendSetWatches, which
// races with its receive loop in v1.0.4).
func clientWatchers(t *testing.T, conn *zk.Conn) int {
	t.Helper()
	n, err := testenv.ClientWatchers(conn)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStoppedMemberLeavesNoWatches: a running member watches its own member
// znode, the member records and the two directories, none of them through
// go-zookeeper; once it stops, its session (still open) holds no watch on
// the server.
func TestStoppedMemberLeavesNoWatches(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 4)
	a := startMember(t, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	mine := func() (bool, string) {
		w := readWatchTable(t)
		var under []string
		for _, p := range w.data[a.sess.ID()] {
			if strings.HasPrefix(p, root+"/") {
				under = append(under, p)
			}
		}
		return len(under) == 0 && w.children == 0, fmt.Sprintf("session watches %v, %d child watches", under, w.children)
	}
	waitFor(t, 20*time.Second, "member's watches", func() (bool, string) {
		w := readWatchTable(t)
		got := w.data[a.sess.ID()]
		ok := slices.Contains(got, root+"/members/a") && slices.Contains(got, root+"/owners/a") && w.children == 2
		return ok, fmt.Sprintf("session watches %v, %d child watches", got, w.children)
	})
	if n := clientWatchers(t, a.sess.Conn()); n != 0 {
		t.Fatalf("go-zookeeper holds watchers on %d paths, want none", n)
	}
	a.stop(t)
	waitFor(t, 20*time.Second, "no watch left", mine)
}
