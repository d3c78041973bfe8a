package main

import (
	"sort"
	"time"

	"github.com/zkelect/zkelect/partition"
)

// This file holds the JSON shape of a partition root's members and
// operator state, shared by `status --root -o json` and the daemon's
// /v1/owners (with tokenJSON and shardJSON from status.go).

// memberJSON is one live member.
type memberJSON struct {
	Member      string            `json:"member"`
	Address     string            `json:"address"`
	Weight      int               `json:"weight"`
	Labels      map[string]string `json:"labels,omitempty"`
	Drained     bool              `json:"drained"`
	DrainReason string            `json:"drain_reason,omitempty"`
	Leads       int               `json:"leads"`
}

// freezeJSON is the maintenance mode of a root.
type freezeJSON struct {
	Since  time.Time  `json:"since"`
	Until  *time.Time `json:"until"` // null: until unfrozen
	Reason string     `json:"reason"`
}

// operatorJSON is what operators decided, as status and /v1/owners show it.
type operatorJSON struct {
	Frozen *freezeJSON       `json:"frozen"` // null when not frozen
	Pins   map[string]string `json:"pins"`
	Moves  map[string]string `json:"moves"` // moves in progress
}

// membersOf returns the members of c, ordered by id; leads counts the
// shards each leads (from the elections for status, from the records for
// /v1/owners).
func membersOf(c partition.Cluster, leads map[string]int) []memberJSON {
	out := make([]memberJSON, 0, len(c.Members))
	for id, m := range c.Members {
		out = append(out, memberJSON{
			Member: id, Address: m.Address, Weight: m.Weight, Labels: m.Labels,
			Drained: m.Drained, DrainReason: c.Operator.Drained[id].Reason, Leads: leads[id],
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Member < out[j].Member })
	return out
}

// operatorOf returns the operator state of c as shown at now.
func operatorOf(c partition.Cluster, now time.Time) operatorJSON {
	op := operatorJSON{Pins: map[string]string{}, Moves: map[string]string{}}
	for s, m := range c.Operator.Pins {
		op.Pins[s] = m
	}
	for s, m := range c.Operator.Moves {
		op.Moves[s] = m
	}
	if f := c.Operator.Freeze; f.Active(now) {
		fj := &freezeJSON{Since: f.Since, Reason: f.Reason}
		if !f.Until.IsZero() {
			u := f.Until
			fj.Until = &u
		}
		op.Frozen = fj
	}
	return op
}
