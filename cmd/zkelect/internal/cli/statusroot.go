package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// This file prints the operator state and the members of a partition
// root for `status --root` (table output).

// writeOperator prints the freeze, if any.
func (st *rootStatus) writeOperator(w io.Writer) error {
	f := st.Frozen
	if f == nil {
		return nil
	}
	until := "until unfrozen"
	if f.Until != nil {
		until = "until " + f.Until.UTC().Format(time.RFC3339)
	}
	reason := f.Reason
	if reason == "" {
		reason = "no reason given"
	}
	_, err := fmt.Fprintf(w, "FROZEN since %s, %s: %s (no balancing moves; orphaned shards still taken over)\n\n",
		f.Since.UTC().Format(time.RFC3339), until, termSafe(reason))
	return err
}

// shardNote says whether a shard is pinned or being moved.
func (st *rootStatus) shardNote(shard string) string {
	var notes []string
	if m, ok := st.Pins[shard]; ok {
		notes = append(notes, "pinned to "+termSafe(m))
	}
	if m, ok := st.Moves[shard]; ok {
		notes = append(notes, "moving to "+termSafe(m))
	}
	return strings.Join(notes, ", ")
}

// writeCounts prints every member: how many shards it leads, its weight,
// address and state (each value from the root escaped: termSafe).
func (st *rootStatus) writeCounts(w io.Writer) error {
	info := map[string]memberJSON{}
	for _, m := range st.MemberList {
		info[m.Member] = m
	}
	members := make([]string, 0, len(st.Members)+len(info))
	for m := range st.Members {
		members = append(members, m)
	}
	for m := range info {
		if _, ok := st.Members[m]; !ok {
			members = append(members, m)
		}
	}
	sort.Strings(members)
	led := 0
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tLEADS\tWEIGHT\tADDRESS\tSTATE")
	for _, m := range members {
		mi, live := info[m]
		weight, addr, state := "-", mi.Address, "live"
		switch {
		case !live:
			state = "not registered"
		case mi.Drained && mi.DrainReason != "":
			state = "drained: " + mi.DrainReason
		case mi.Drained:
			state = "drained"
		}
		if live {
			weight = fmt.Sprint(mi.Weight)
		}
		if addr == "" {
			addr = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", termSafe(m), st.Members[m], weight, termSafe(addr), termSafe(state))
		led += st.Members[m]
	}
	fmt.Fprintf(tw, "(total)\t%d of %d shards\n", led, len(st.Shards))
	return tw.Flush()
}

// errNoShards reports a partition root without shards: a mistyped --root,
// or no shards daemon has run there yet. status and watch say the same.
func errNoShards(root string) error {
	return fmt.Errorf("partition root %s has no shards: check --root, or start a shards daemon first", root)
}
