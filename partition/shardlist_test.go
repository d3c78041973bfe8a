package partition_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// TestMembersWithDifferentShardListsLeadEveryShard runs members that
// disagree on the shard list (a rolling change of it, a misconfiguration):
// a shard must never be dealt to a member that does not run it, so every
// shard in some live member's list is led. Before, the balance dealt a's
// extra shards to b, which never campaigned for them.
func TestMembersWithDifferentShardListsLeadEveryShard(t *testing.T) {
	tr, root := newTracker(), newRoot(t)
	all, half := partition.Range(0, 20), partition.Range(0, 10)
	a := startMember(t, root, "a", all, tr)
	b := startMember(t, root, "b", half, tr)
	awaitAllLed(t, all, []*member{a, b})
	tr.check(t, true)
}

// TestMemberWithoutShardsIsDealtNone runs a member with no shards beside
// two that run 12: when one of those stops, the other must lead all 12;
// none may be dealt to the member that runs none.
func TestMemberWithoutShardsIsDealtNone(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 12)
	a := startMember(t, root, "a", shards, tr, noGrace)
	b := startMember(t, root, "b", shards, tr, noGrace)
	startMember(t, root, "router", nil, tr, noGrace)
	awaitAllLed(t, shards, []*member{a, b})
	a.stop(t)
	awaitAllLed(t, shards, []*member{b})
	tr.check(t, true)
}

// awaitAllLed waits until every shard is led by one of ms.
func awaitAllLed(t *testing.T, shards []string, ms []*member) {
	t.Helper()
	waitFor(t, 30*time.Second, "every shard led", func() (bool, string) {
		lead := leaders(t, ms)
		missing := 0
		for _, s := range shards {
			if _, ok := lead[s]; !ok {
				missing++
			}
		}
		return missing == 0, fmt.Sprintf("%d of %d shards unled", missing, len(shards))
	})
}
