package electview

import "testing"

func TestClassifyNamesElectionsAndCandidates(t *testing.T) {
	root := "/apps/b"
	tests := []struct {
		path  string
		kind  pathKind
		elec  string
		shard string
		flat  bool
	}{
		{"/apps/b/members/m1", pathOther, "", "", false},
		{"/apps/b/owners/m1", pathOther, "", "", false},
		{"/apps/b/buckets", pathLayout, "", "", false},
		{"/apps/b/shards", pathLayout, "", "", false},
		{"/apps/b/buckets/3f", pathBucket, "", "", false},
		{"/apps/b/buckets/3f/7", pathElection, "/apps/b/buckets/3f/7", "7", false},
		{"/apps/b/buckets/3f/7/_c_ab-0000000001", pathCandidate, "/apps/b/buckets/3f/7", "7", false},
		{"/apps/b/shards/7", pathElection, "/apps/b/shards/7", "7", true},
		{"/apps/b/shards/7/n_0000000001", pathCandidate, "/apps/b/shards/7", "7", true},
		{"/apps/bb/buckets/3f/7", pathOther, "", "", false},
	}
	for _, tt := range tests {
		kind, elec, el := classify(root, tt.path)
		if kind != tt.kind || elec != tt.elec || el.shard != tt.shard || el.flat != tt.flat {
			t.Errorf("classify(%s) = %v %q %+v, want %v %q %s flat=%v", tt.path, kind, elec, el, tt.kind, tt.elec, tt.shard, tt.flat)
		}
	}
}

func TestFirstOfOrdersBySequenceAcrossTheWrap(t *testing.T) {
	cs := map[string]cand{
		"/e/n_2147483647":  {seq: 2147483647},
		"/e/n_-2147483648": {seq: -2147483648}, // created after the wrap: behind
		"/e/n_2147483600":  {seq: 2147483600},  // first
	}
	if f, ok := firstOf(cs); !ok || f.znode != "/e/n_2147483600" {
		t.Errorf("firstOf = %+v %v, want /e/n_2147483600", f, ok)
	}
	if _, ok := firstOf(nil); ok {
		t.Error("firstOf(nil) found a candidate")
	}
}
