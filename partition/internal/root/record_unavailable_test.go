package root

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// TestUnavailableShardsReadByAnEarlierRelease: a record listing shards as
// unavailable decodes, in a release before the field (its record struct,
// decoded as it decodes: encoding/json, unknown fields ignored), to the
// same session, leaderships and reservations, with the unavailable shards
// in neither: to an older member they are shards the member neither leads
// nor reserves, which is what they are. This release reads the list back.
func TestUnavailableShardsReadByAnEarlierRelease(t *testing.T) {
	rec := Record{Session: 4660, Leading: map[string]uint64{"0": 7}, Reserved: []string{"1"}, Unavailable: []string{"2", "3"}, Weight: 1}
	data, err := rec.Encode()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var old struct { // the record of the release before Unavailable
		Session  int64             `json:"session"`
		Leading  map[string]uint64 `json:"leading"`
		Reserved []string          `json:"reserved,omitempty"`
		ShardSet string            `json:"shard_set,omitempty"`
		Address  string            `json:"address,omitempty"`
		Labels   map[string]string `json:"labels,omitempty"`
		Weight   int               `json:"weight,omitempty"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatalf("an earlier release fails to decode the record: %v", err)
	}
	if old.Session != rec.Session || !maps.Equal(old.Leading, rec.Leading) || !slices.Equal(old.Reserved, rec.Reserved) || old.Weight != 1 {
		t.Fatalf("an earlier release reads %+v from %+v", old, rec)
	}
	back, err := DecodeRecord(data)
	if err != nil || !slices.Equal(back.Unavailable, rec.Unavailable) {
		t.Fatalf("decoded unavailable %v (%v), want %v", back.Unavailable, err, rec.Unavailable)
	}
}
