package root

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// This file holds the operator's state of a root: the data of the znode
// <root>/operator, written by Operator (and `zkelect shards <verb>`),
// watched by every member and read by every member's assignment (Input's
// Drained, Frozen, Pins and Weights). It is one znode, so that a change is
// one version-checked write and every member sees the whole state at once.

// MaxWeight caps a member's weight (Config.Weight, the operator's
// SetWeight).
const MaxWeight = 10000

// OperatorNode is the name of the operator state's znode under the root.
const OperatorNode = "operator"

// OperatorState is what operators decided for a root. The zero value (no
// znode yet) decides nothing. Its JSON is the znode's data; fields are
// optional, and unknown fields are kept by older readers' writes only if
// they use Operator (which rewrites the whole state), so upgrade the
// operators' tools with the members.
type OperatorState struct {
	// Drained maps a drained member (it keeps running and takes no shard)
	// to when and why.
	Drained map[string]Note `json:"drained,omitempty"`
	// Freeze, when set and not expired, is the maintenance mode: no
	// balancing move starts; shards whose leader left are still taken over.
	Freeze *Freeze `json:"freeze,omitempty"`
	// Pins maps a shard to the member that leads it whenever that member is
	// live and not drained.
	Pins map[string]string `json:"pins,omitempty"`
	// Moves maps a shard to the member it is being moved to: a pin that the
	// member clears once it leads the shard and the balance keeps it there
	// without the pin.
	Moves map[string]string `json:"moves,omitempty"`
	// Weights maps a member to the weight operators set for it, overriding
	// the weight it publishes (Config.Weight).
	Weights map[string]int `json:"weights,omitempty"`
}

// Note says when and why an operator changed something.
type Note struct {
	Since  time.Time `json:"since"`
	Reason string    `json:"reason,omitempty"`
}

// Freeze is the maintenance mode of a root.
type Freeze struct {
	Note
	// Until is when the freeze lifts itself; zero for never (until
	// unfrozen). Members compare it with their own clocks.
	Until time.Time `json:"until,omitzero"`
}

// Active reports whether the freeze holds at now.
func (f *Freeze) Active(now time.Time) bool {
	return f != nil && (f.Until.IsZero() || now.Before(f.Until))
}

// Frozen reports whether the root is frozen at now.
func (s OperatorState) Frozen(now time.Time) bool { return s.Freeze.Active(now) }

// IsDrained reports whether member is drained.
func (s OperatorState) IsDrained(member string) bool {
	_, ok := s.Drained[member]
	return ok
}

// Clone returns a deep copy of s, for a read-modify-write.
func (s OperatorState) Clone() OperatorState {
	c := OperatorState{
		Drained: maps.Clone(s.Drained), Pins: maps.Clone(s.Pins),
		Moves: maps.Clone(s.Moves), Weights: maps.Clone(s.Weights),
	}
	if s.Freeze != nil {
		f := *s.Freeze
		c.Freeze = &f
	}
	return c
}

// DrainedList returns the drained member ids, sorted.
func (s OperatorState) DrainedList() []string {
	return slices.Sorted(maps.Keys(s.Drained))
}

// AssignPins returns the pins and the moves in progress, as Input's Pins.
// A pin wins over a move of the same shard to another member: that move is
// void (VoidMove), as Pin clears it.
func (s OperatorState) AssignPins() map[string]string {
	if len(s.Moves) == 0 {
		return s.Pins
	}
	out := maps.Clone(s.Pins)
	if out == nil {
		out = map[string]string{}
	}
	for sh, to := range s.Moves {
		if _, pinned := s.Pins[sh]; !pinned {
			out[sh] = to
		}
	}
	return out
}

// VoidMove reports whether the move of shard can never take effect and is
// to be cleared: its target is not live (not in live), or is drained
// (while some live member is not), or the shard is pinned to another
// member. live maps the live members' ids to their sessions.
func (s OperatorState) VoidMove(shard string, live map[string]int64) bool {
	to, ok := s.Moves[shard]
	if !ok {
		return false
	}
	if p, pinned := s.Pins[shard]; pinned && p != to {
		return true
	}
	if _, isLive := live[to]; !isLive {
		return true
	}
	return s.IsDrained(to) && !s.allDrained(live)
}

// allDrained reports whether every live member is drained (drains are then
// ignored: availability first).
func (s OperatorState) allDrained(live map[string]int64) bool {
	for id := range live {
		if !s.IsDrained(id) {
			return false
		}
	}
	return true
}

// DecodeOperatorState parses the operator znode's data; empty data is the
// zero state. Data over maxRecordBytes (more than Encode writes) is
// refused with a *BoundError.
func DecodeOperatorState(data []byte) (OperatorState, error) {
	var s OperatorState
	if len(data) == 0 {
		return s, nil
	}
	if len(data) > maxRecordBytes {
		return OperatorState{}, &BoundError{What: "operator state", Bytes: len(data), Max: maxRecordBytes, Stored: true,
			Reason: "what Operator writes"}
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return OperatorState{}, fmt.Errorf("decode operator state: %w", err)
	}
	return s, nil
}

// Encode returns the znode's data.
func (s OperatorState) Encode() ([]byte, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode operator state: %w", err)
	}
	if len(data) > maxRecordBytes {
		return nil, fmt.Errorf("%w: operator state of %d bytes", ErrRecordTooLarge, len(data))
	}
	return data, nil
}
