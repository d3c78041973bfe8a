package partition

import (
	"maps"
	"testing"

	"github.com/zkelect/zkelect/partition/assign"
	rootdata "github.com/zkelect/zkelect/partition/internal/root"
)

// TestOldFormatRecordStillCounts: a record written by a release before
// member metadata and weights (no address, labels or weight) decodes, its
// member weighs 1, and the assignment over it is the one that release
// computed (the golden vectors pin the rule itself).
func TestOldFormatRecordStillCounts(t *testing.T) {
	old := []byte(`{"session":4660,"leading":{"0":4294967297,"1":4294967298},"reserved":["2"],"shard_set":"3-00000000000000ff"}`)
	r, err := rootdata.DecodeRecord(old)
	if err != nil {
		t.Fatalf("decode an old-format record: %v", err)
	}
	if r.Address != "" || r.Labels != nil || r.Weight != 0 || len(r.Leading) != 2 || r.ShardSet == "" {
		t.Fatalf("old record decoded as %+v", r)
	}
	v := rootdata.NewView(true)
	v.Apply(rootdata.Update{Members: map[string]int64{"old": 4660, "new": 4661}})
	v.Apply(rootdata.Update{Member: "old", Rec: &rootdata.StoredRecord{Record: r}})
	v.Apply(rootdata.Update{Member: "new", Rec: &rootdata.StoredRecord{Record: rootdata.Record{Session: 4661, Weight: 1, Address: "10.0.0.2:80"}}})
	if w := v.Weight("old"); w != 1 {
		t.Fatalf("old member's weight %d, want 1", w)
	}
	cur, tok := v.Current(nil)
	in := assign.Input{Shards: Range(0, 3), Members: v.LiveMembers(), Current: cur, Tokens: tok}
	want := assign.Assign(in)
	in.Weights = map[string]int{"old": v.Weight("old"), "new": v.Weight("new")}
	if got := assign.Assign(in); !maps.Equal(got, want) {
		t.Fatalf("weights of 1 from old and new records changed the assignment: %v, want %v", got, want)
	}
}
