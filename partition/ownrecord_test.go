package partition_test

import (
	"slices"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// TestReservationSurvivesAMissingOwnRecord: a member whose session expired
// late in its restart grace comes back to find its record deleted by the
// others, while another member leads its reserved shards as their
// successor. Its assignment must still count its reservation (it knows its
// own claims; the record only lags them), so it keeps every reserved shard
// as its target. Computed from the record as read back, the reservation
// was void and the shards stayed with the successor (found by
// TestSessionExpiryReentersAndKeepsShards once record writes were spaced
// out).
func TestReservationSurvivesAMissingOwnRecord(t *testing.T) {
	shards := partition.Range(0, 30)
	c := newMember(t, connect(t, sessionTimeout), newRoot(t), "c", shards, newTracker())
	reserved := []string{"20", "21", "22", "23", "24", "25", "26", "27", "28", "29"}
	// b leads c's shards with tokens older than its own, so that an
	// assignment without c's claims keeps them with b up to b's quota.
	a, b := map[string]uint64{}, map[string]uint64{}
	for i, s := range shards {
		switch {
		case i < 10:
			a[s] = uint64(100 + i)
		case i < 20:
			b[s] = uint64(200 + i)
		default:
			b[s] = uint64(i)
		}
	}
	kept, targets := partition.ReservedAfterAssigning(c.m, map[string]int64{"a": 1, "b": 2}, map[string]map[string]uint64{"a": a, "b": b}, reserved)
	if !slices.Equal(kept, reserved) {
		t.Errorf("reservation after the assignment %v, want %v (targets %v)", kept, reserved, targets)
	}
	for s, m := range targets {
		if m != "c" {
			t.Errorf("reserved shard %s assigned to %q (another member when empty), want c", s, m)
		}
	}
}

// TestLongSuspensionBecomesAReservation: a leadership suspended for longer
// than a session timeout leaves the record's leaderships (its znode may
// have gone with the session) but stays in it as a reservation for the
// restart grace, so the record never shows the shard unclaimed while the
// member is cut off; without a restart grace it is simply dropped.
func TestLongSuspensionBecomesAReservation(t *testing.T) {
	for _, c := range []struct {
		name  string
		grace time.Duration
		want  []string
	}{
		{"with a restart grace", 0, []string{"7"}},
		{"without a restart grace", -1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			mb := newMember(t, connect(t, sessionTimeout), newRoot(t), "a", partition.Range(0, 10), newTracker(),
				func(cfg *partition.Config) { cfg.RestartGrace = c.grace })
			leading, reserved := partition.RecordAfterLongSuspension(mb.m, "7")
			if len(leading) != 0 || !slices.Equal(reserved, c.want) {
				t.Errorf("record leads %v and reserves %v, want no leadership and %v reserved", leading, reserved, c.want)
			}
		})
	}
}
