package zkelecthttp

import (
	"sort"
	"strconv"
	"time"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/zxidfence"
)

// This file holds the JSON documents the endpoints serve. They are the
// daemon's wire format (and `zkelect status --root -o json`'s): field names
// change only on purpose.

// Token is a fencing token in the forms people read and programs parse.
type Token struct {
	Decimal      string `json:"decimal"`       // the zxid in decimal, as in ZKELECT_FENCING_TOKEN
	Hex          string `json:"hex"`           // e.g. 0x100000005
	EpochCounter string `json:"epoch_counter"` // e.g. 1:5
}

// NewToken returns t in its three forms.
func NewToken(t zxidfence.Token) Token {
	return Token{Decimal: t.Decimal(), Hex: t.Hex(), EpochCounter: t.EpochCounter()}
}

// Leadership is one leadership held by this process, as /v1/leaderships
// lists it: a shard of a Manager, or an election of a recipe.Candidate.
type Leadership struct {
	Election     string    `json:"election,omitempty"` // recipe: the election path
	Shard        string    `json:"shard,omitempty"`    // partition: the shard id
	Member       string    `json:"member"`             // the member or participant id
	Token        string    `json:"token"`              // decimal zxid, as in ZKELECT_FENCING_TOKEN
	TokenHex     string    `json:"token_hex"`          // e.g. 0x100000005
	EpochCounter string    `json:"epoch_counter"`      // e.g. 1:5
	Since        time.Time `json:"since,omitzero"`     // when it began; omitted when unknown
}

// Shard is one shard of a partition root.
type Shard struct {
	Shard    string     `json:"shard"`
	Leader   string     `json:"leader"` // "" when nobody leads
	Address  string     `json:"address,omitempty"`
	Token    *Token     `json:"token"`           // null when nobody leads
	Since    *time.Time `json:"since,omitempty"` // /v1/owners: when this process first saw the leadership
	Standbys []string   `json:"standbys"`        // status only: /v1/owners follows the leaders, not the standbys
	Stuck    string     `json:"stuck,omitempty"` // a persistent znode in the election, no candidate: see partition.Owner
	Stray    string     `json:"stray,omitempty"` // an election outside the root's buckets (an older release's): see partition.Owner
}

// Member is one live member of a root.
type Member struct {
	Member      string            `json:"member"`
	Address     string            `json:"address"`
	Weight      int               `json:"weight"`
	Labels      map[string]string `json:"labels,omitempty"`
	Drained     bool              `json:"drained"`
	DrainReason string            `json:"drain_reason,omitempty"`
	Leads       int               `json:"leads"`
}

// Freeze is the maintenance mode of a root.
type Freeze struct {
	Since  time.Time  `json:"since"`
	Until  *time.Time `json:"until"` // null: until unfrozen
	Reason string     `json:"reason"`
}

// Operator is what operators decided (operator.State) as shown.
type Operator struct {
	Frozen *Freeze           `json:"frozen"` // null when not frozen
	Pins   map[string]string `json:"pins"`   // shard → member
	Moves  map[string]string `json:"moves"`  // moves in progress: shard → member
}

// Owners is a root's picture: /v1/owners, and `zkelect status --root -o
// json`.
type Owners struct {
	Root       string         `json:"root"`
	Shards     []Shard        `json:"shards"`             // ordered by ShardLess
	Members    map[string]int `json:"leaders_per_member"` // member → shards it leads
	MemberList []Member       `json:"members"`            // ordered by id
	Operator
}

// LeaderEvent is one leader change: /v1/watch's "leader" event.
type LeaderEvent struct {
	ID      uint64    `json:"id"` // its number in this stream
	Time    time.Time `json:"time"`
	Shard   string    `json:"shard"`
	Leader  *string   `json:"leader"` // null: no leader
	Address string    `json:"address,omitempty"`
	Token   *Token    `json:"token"` // null: no leader
}

// MembersOf returns the members of c ordered by id; leads counts the
// shards each leads.
func MembersOf(c partition.Cluster, leads map[string]int) []Member {
	out := make([]Member, 0, len(c.Members))
	for id, m := range c.Members {
		out = append(out, Member{
			Member: id, Address: m.Address, Weight: m.Weight, Labels: m.Labels,
			Drained: m.Drained, DrainReason: c.Operator.Drained[id].Reason, Leads: leads[id],
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Member < out[j].Member })
	return out
}

// OperatorOf returns the operator state of c as shown at now (a freeze
// that ended is not shown).
func OperatorOf(c partition.Cluster, now time.Time) Operator {
	op := Operator{Pins: map[string]string{}, Moves: map[string]string{}}
	for s, m := range c.Operator.Pins {
		op.Pins[s] = m
	}
	for s, m := range c.Operator.Moves {
		op.Moves[s] = m
	}
	if f := c.Operator.Freeze; f.Active(now) {
		fj := &Freeze{Since: f.Since, Reason: f.Reason}
		if !f.Until.IsZero() {
			u := f.Until
			fj.Until = &u
		}
		op.Frozen = fj
	}
	return op
}

// ShardLess is the order of every shard listing here (and in the CLI):
// numerically when both ids are numbers, else lexically, so listings read
// 0, 1, 2, ..., 10 rather than 0, 1, 10, 11.
func ShardLess(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}
