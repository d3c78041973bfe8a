package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Summary gives the figures of a chaos run.
type Summary struct {
	// Faults counts injected faults by name (KindFault records).
	Faults map[string]int
	// Terms counts distinct leaderships (member, shard, token); Failovers
	// counts those that followed an earlier term of the same shard.
	Terms, Failovers int
	// Overlaps counts pairs of acting intervals of one shard that
	// overlapped in time (each must have been fenced); OverlapsAfter
	// splits them by the last fault injected before the later term began.
	Overlaps      int
	OverlapsAfter map[string]int
	// Writes counts write attempts; the rest split them by result.
	Writes, Accepted, Stale, NotLeader, Failed int
	// MemberErrors lists unexpected errors members recovered from by
	// starting their component again (KindMemberError).
	MemberErrors []string
	// MaxUnavailable is, per shard, the longest time without an acting
	// leader between its first leader and the end of observation.
	MaxUnavailable map[string]time.Duration
}

func summarise(recs []Record, byShard map[string][]interval, end time.Time) Summary {
	s := Summary{Faults: map[string]int{}, MaxUnavailable: map[string]time.Duration{}}
	for _, r := range recs {
		switch r.Kind {
		case KindFault:
			s.Faults[r.Fault]++
		case KindMemberError:
			s.MemberErrors = append(s.MemberErrors, r.Member+": "+r.Detail)
		case KindWrite:
			s.Writes++
			switch r.Result {
			case Accepted:
				s.Accepted++
			case RejectedStale:
				s.Stale++
			case RejectedNotLeader:
				s.NotLeader++
			default:
				s.Failed++
			}
		}
	}
	for shard, ivs := range byShard {
		seen := map[term]bool{}
		for _, iv := range ivs {
			seen[iv.term] = true
		}
		s.Terms += len(seen)
		s.Failovers += len(seen) - 1
		if len(ivs) > 0 {
			gap, _ := longestGap(ivs, ivs[0].start, end)
			s.MaxUnavailable[shard] = gap
		}
	}
	return s
}

// WorstUnavailable returns the shard with the longest MaxUnavailable and
// that time ("" and 0 when there is none).
func (s Summary) WorstUnavailable() (string, time.Duration) {
	var worst string
	var d time.Duration
	for _, shard := range sortedKeys(s.MaxUnavailable) {
		if v := s.MaxUnavailable[shard]; v > d {
			worst, d = shard, v
		}
	}
	return worst, d
}

// String renders the summary as a few lines of text.
func (s Summary) String() string {
	var b strings.Builder
	total := 0
	var kinds []string
	for _, k := range sortedKeys(s.Faults) {
		total += s.Faults[k]
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, s.Faults[k]))
	}
	fmt.Fprintf(&b, "faults: %d (%s)\n", total, strings.Join(kinds, " "))
	var after []string
	for _, k := range sortedKeys(s.OverlapsAfter) {
		after = append(after, fmt.Sprintf("%s=%d", k, s.OverlapsAfter[k]))
	}
	fmt.Fprintf(&b, "terms: %d, failovers: %d, overlapping acting intervals: %d (after: %s; token-ordered unless reported)\n",
		s.Terms, s.Failovers, s.Overlaps, strings.Join(after, " "))
	fmt.Fprintf(&b, "writes: %d attempted, %d accepted, %d rejected as stale, %d rejected not-leader, %d failed (outcome unknown)\n",
		s.Writes, s.Accepted, s.Stale, s.NotLeader, s.Failed)
	fmt.Fprintf(&b, "max unavailability per shard: %s", s.unavailability())
	if len(s.MemberErrors) > 0 {
		fmt.Fprintf(&b, "\nmember errors recovered by restarting the component: %d", len(s.MemberErrors))
		for _, e := range s.MemberErrors[:min(5, len(s.MemberErrors))] {
			fmt.Fprintf(&b, "\n  %s", e)
		}
	}
	return b.String()
}

// unavailability lists the five worst shards and the median shard's figure.
func (s Summary) unavailability() string {
	shards := sortedKeys(s.MaxUnavailable)
	if len(shards) == 0 {
		return "none observed"
	}
	sort.SliceStable(shards, func(i, j int) bool { return s.MaxUnavailable[shards[i]] > s.MaxUnavailable[shards[j]] })
	var parts []string
	for _, sh := range shards[:min(5, len(shards))] {
		parts = append(parts, fmt.Sprintf("%s=%s", sh, s.MaxUnavailable[sh].Round(time.Millisecond)))
	}
	median := s.MaxUnavailable[shards[len(shards)/2]].Round(time.Millisecond)
	return fmt.Sprintf("worst %s; median %s over %d shards", strings.Join(parts, " "), median, len(shards))
}
