package partition

import "testing"

// TestTargetsMovedIgnoresShardsThatOnlyLeft: a shard dropped from the
// targets (its runner here finished) is no change to act on; one that is
// new or has another target is.
func TestTargetsMovedIgnoresShardsThatOnlyLeft(t *testing.T) {
	prev := map[string]string{"1": "b", "2": "a"}
	tests := []struct {
		name string
		next map[string]string
		want bool
	}{
		{"same", map[string]string{"1": "b", "2": "a"}, false},
		{"a handoff done", map[string]string{"2": "a"}, false},
		{"none left", map[string]string{}, false},
		{"a new shard", map[string]string{"1": "b", "2": "a", "3": "a"}, true},
		{"another target", map[string]string{"1": "c", "2": "a"}, true},
	}
	for _, tt := range tests {
		if got := targetsMoved(prev, tt.next); got != tt.want {
			t.Errorf("%s: targetsMoved = %v, want %v", tt.name, got, tt.want)
		}
	}
}
