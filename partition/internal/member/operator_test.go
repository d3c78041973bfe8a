package member

import (
	"slices"
	"testing"
	"time"

	"github.com/zkelect/zkelect/partition/assign"
)

// TestFreezeLiftsItself: a freeze with an end honoured by an assignment
// asks a step at its end and is expired from then on; a freeze an
// operator must lift, or none, never expires by itself; the next
// assignment's freeze replaces the last one's.
func TestFreezeLiftsItself(t *testing.T) {
	t0 := time.Unix(1000, 0)
	end := t0.Add(time.Minute)
	tests := []struct {
		name     string
		frozen   bool
		until    time.Time
		wantWake time.Time
		at       time.Time
		expired  bool
	}{
		{"frozen until an end, before it", true, end, end, end.Add(-time.Nanosecond), false},
		{"frozen until an end, at it", true, end, end, end, true},
		{"frozen until lifted", true, time.Time{}, time.Time{}, end.Add(time.Hour), false},
		{"not frozen (an end of a freeze not honoured)", false, end, time.Time{}, end.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Freeze
			if wake := f.Honoured(tt.frozen, tt.until); !wake.Equal(tt.wantWake) {
				t.Fatalf("Honoured: wake at %v, want %v", wake, tt.wantWake)
			}
			if got := f.Expired(tt.at); got != tt.expired {
				t.Fatalf("Expired(%v) = %v, want %v", tt.at, got, tt.expired)
			}
		})
	}
	var f Freeze
	f.Honoured(true, end)
	f.Honoured(false, time.Time{})
	if f.Expired(end.Add(time.Hour)) {
		t.Fatalf("a freeze lifted by an operator still expires: the next assignment replaced it")
	}
}

// TestDoneMoves: a move to this member is done (cleared) when it leads
// the shard and the assignment without the move keeps it here; not while
// another member leads it, nor when the shard's own pin would take it
// elsewhere, nor a move to another member, nor one being cleared.
func TestDoneMoves(t *testing.T) {
	base := assign.Input{
		Shards:  []string{"0", "1", "2", "3"},
		Members: []string{"a", "b"},
		Current: map[string]string{"0": "a", "2": "a", "1": "b", "3": "b"},
	}
	leadsA := func(s string) bool { return s == "0" || s == "2" }
	tests := []struct {
		name     string
		moves    map[string]string
		pins     map[string]string
		clearing map[string]bool
		want     []string
	}{
		{"done: led here, balanced without it", map[string]string{"2": "a"}, nil, nil, []string{"2"}},
		{"led by another member still", map[string]string{"1": "a"}, nil, nil, nil},
		{"a move to another member", map[string]string{"3": "b"}, nil, nil, nil},
		{"the shard's pin takes it elsewhere", map[string]string{"2": "a"}, map[string]string{"2": "b"}, nil, nil},
		{"being cleared already", map[string]string{"2": "a"}, nil, map[string]bool{"2": true}, nil},
		{"several, sorted", map[string]string{"2": "a", "0": "a"}, nil, nil, []string{"0", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			in.Pins = map[string]string{}
			for s, m := range tt.pins {
				in.Pins[s] = m
			}
			for s, m := range tt.moves {
				in.Pins[s] = m // the assignment's input holds pins and moves (AssignPins)
			}
			got := DoneMoves("a", tt.moves, tt.pins, in.Pins, leadsA, tt.clearing, func(pins map[string]string, s string) string {
				without := in
				without.Pins = pins
				return assign.Assign(without)[s]
			})
			if !slices.Equal(got, tt.want) {
				t.Fatalf("DoneMoves = %v, want %v", got, tt.want)
			}
		})
	}
}
