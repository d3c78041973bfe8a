package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// This file prints, for `watch --root`, what changes in a root besides its
// leaders: members joining and leaving (with address and weight), drains,
// the freeze, pins and moves, and weights, one line each, from
// partition.WatchCluster.

// rootLine is one change of a root's members or operator state, as
// -o json prints it.
type rootLine struct {
	Time   time.Time `json:"time"`
	Root   string    `json:"root"`
	Change string    `json:"change"` // member, left, drained, undrained, weight, frozen, unfrozen, pinned, unpinned, moving, moved
	Member string    `json:"member,omitempty"`
	Shard  string    `json:"shard,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// watchRoot prints the root's member and operator changes until ctx is
// done (the first picture as it is).
func watchRoot(ctx context.Context, sess *recipe.Session, root string, p *watchPrinter, log zerolog.Logger) {
	var last *partition.Cluster
	err := partition.WatchCluster(ctx, sess, root, func(c partition.Cluster) {
		prev := partition.Cluster{}
		if last != nil {
			prev = *last
		}
		for _, l := range rootChanges(root, prev, c) {
			p.printRoot(l)
		}
		last = &c
	})
	if err != nil {
		log.Warn().Err(err).Str("root", root).Msg("stopped watching members and operator state")
	}
}

// rootChanges lists what differs from prev to next, members first.
func rootChanges(root string, prev, next partition.Cluster) []rootLine {
	now := time.Now().UTC()
	var out []rootLine
	add := func(change, member, shard, detail string) {
		out = append(out, rootLine{Time: now, Root: root, Change: change, Member: member, Shard: shard, Detail: detail})
	}
	for _, id := range slices.Sorted(maps.Keys(next.Members)) {
		m, o := next.Members[id], prev.Members[id]
		_, was := prev.Members[id]
		switch {
		case !was:
			add("member", id, "", fmt.Sprintf("address=%s weight=%d", orDash(m.Address), m.Weight))
		case m.Weight != o.Weight:
			add("weight", id, "", fmt.Sprint(m.Weight))
		}
		if m.Drained && (!was || !o.Drained) {
			add("drained", id, "", next.Operator.Drained[id].Reason)
		} else if was && o.Drained && !m.Drained {
			add("undrained", id, "", "")
		}
	}
	for _, id := range slices.Sorted(maps.Keys(prev.Members)) {
		if _, ok := next.Members[id]; !ok {
			add("left", id, "", "")
		}
	}
	nowT := time.Now()
	if f := next.Operator.Freeze; f.Active(nowT) && !prev.Operator.Freeze.Active(nowT) {
		detail := f.Reason
		if !f.Until.IsZero() {
			detail += " (until " + f.Until.UTC().Format(time.RFC3339) + ")"
		}
		add("frozen", "", "", detail)
	} else if prev.Operator.Freeze.Active(nowT) && !f.Active(nowT) {
		add("unfrozen", "", "", "")
	}
	diffShards(prev.Operator.Pins, next.Operator.Pins, func(s, m string) { add("pinned", m, s, "") }, func(s, m string) { add("unpinned", m, s, "") })
	diffShards(prev.Operator.Moves, next.Operator.Moves, func(s, m string) { add("moving", m, s, "") }, func(s, m string) { add("moved", m, s, "") })
	return out
}

// diffShards calls added and removed for the entries of a shard→member
// map that appeared (or changed) and disappeared.
func diffShards(prev, next map[string]string, added, removed func(shard, member string)) {
	for _, s := range slices.Sorted(maps.Keys(next)) {
		if prev[s] != next[s] {
			added(s, next[s])
		}
	}
	for _, s := range slices.Sorted(maps.Keys(prev)) {
		if _, ok := next[s]; !ok {
			removed(s, prev[s])
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printRoot writes one root change as text or a JSON line.
func (p *watchPrinter) printRoot(l rootLine) {
	line := l.Time.Format("15:04:05.000") + " " + l.Change
	if l.Shard != "" {
		line += " shard=" + l.Shard
	}
	if l.Member != "" {
		line += " member=" + l.Member
	}
	if l.Detail != "" {
		line += " " + l.Detail
	}
	p.emit(l, line)
}
