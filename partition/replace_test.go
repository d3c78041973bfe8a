package partition_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// TestRefusedStaleMemberLeavesTheRecordAlone: member a is cut off until its
// session expires and a replacement a starts on another session. When the
// old a comes back it is refused (ErrDuplicateMember) and ends; it once
// wrote its final record over the replacement's on the way out, and the
// other members then saw no leader for every shard the replacement led.
func TestRefusedStaleMemberLeavesTheRecordAlone(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 12)
	log := newLeaderLog(t)
	b := startMember(t, root, "b", shards, tr, func(c *partition.Config) { c.OnLeaderChanged = log.record })
	log.endsWith(b.ended)
	proxy := zkc.NewProxyT(t)
	stale := startMemberOn(t, connectTo(t, proxy.Addrs(), sessionTimeout), root, "a", shards, tr)
	waitBalanced(t, shards, []*member{stale, b}, 20*time.Second)

	proxy.Blackhole()
	waitFor(t, 20*time.Second, "the cut-off member's session to expire", func() (bool, string) {
		live, err := partition.LiveMembers(t.Context(), b.sess, root)
		_, registered := live["a"]
		return err == nil && !registered, "a still registered"
	})
	a := startMember(t, root, "a", shards, tr)
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)

	proxy.Heal()
	select {
	case err := <-stale.done:
		stale.once.Do(stale.cancel)
		if !errors.Is(err, partition.ErrDuplicateMember) {
			t.Fatalf("the stale member's Run returned %v, want ErrDuplicateMember", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stale member's Run did not end within 30s of it coming back")
	}
	rec := readRecord(t, b.sess, root, "a")
	if rec.Session != a.sess.ID() {
		t.Errorf("a's record was written by session 0x%x after the stale member left; the live a's session is 0x%x", rec.Session, a.sess.ID())
	}
	waitFor(t, 10*time.Second, "b's OnLeaderChanged to report a's and b's shards", func() (bool, string) {
		return log.matches([]*member{a, b})
	})
	tr.check(t, false)
}

// storedRecord is the part of a member's record (<root>/owners/<id>, JSON
// while small) the tests read.
type storedRecord struct {
	Session int64             `json:"session"`
	Leading map[string]uint64 `json:"leading"`
}

// readRecord reads member id's record under root.
func readRecord(t *testing.T, sess *recipe.Session, root, id string) storedRecord {
	t.Helper()
	p := root + "/owners/" + id
	data, _, err := sess.Conn().Get(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	var rec storedRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("decode %s (%q): %v", p, data, err)
	}
	return rec
}

// TestRecordRepairedAfterAnotherWriter: a member whose record another
// writer replaced (an operator, or a stale process with its id) writes it
// again, over the other's version, since it holds the member id; the
// others would otherwise see its shards without a leader.
func TestRecordRepairedAfterAnotherWriter(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 6)
	a := startMember(t, root, "a", shards, tr)
	b := startMember(t, root, "b", shards, tr)
	waitBalanced(t, shards, []*member{a, b}, 20*time.Second)
	published := func() (bool, string) {
		rec := readRecord(t, b.sess, root, "a")
		return rec.Session == a.sess.ID() && len(rec.Leading) == 3, fmt.Sprintf("record %+v", rec)
	}
	waitFor(t, 10*time.Second, "a to publish its 3 shards", published)
	if _, err := b.sess.Conn().Set(root+"/owners/a", []byte(`{"session":1,"leading":{}}`), -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "a to write its record again", published)
	tr.check(t, true)
}
