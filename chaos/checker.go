package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

// Rules the Checker enforces, numbered as in the package doc.
const (
	RuleStaleAccepted = 1 // a lower token accepted after a higher one
	RuleOverlap       = 2 // overlapping terms whose later token is not higher
	RuleUnavailable   = 3 // a shard leaderless too long after the last heal
	RuleLeftover      = 4 // a process, znode or goroutine left behind
)

// maxViolationsPerRule caps how many violations of one rule a Report keeps
// (the count is still exact).
const maxViolationsPerRule = 20

// CheckConfig says what the Checker expects of a history.
type CheckConfig struct {
	// Shards lists every election that must have a leader once faults
	// have healed: partition shard ids and single-election names.
	Shards []string
	// SessionTimeout is the members' negotiated session timeout.
	SessionTimeout time.Duration
	// Bound is how much longer than SessionTimeout a shard may stay
	// without an acting leader after the last heal (rule 3).
	Bound time.Duration
}

// Violation is one broken guarantee, with the records that prove it.
type Violation struct {
	Rule    int
	Message string
	Records []Record
}

// String renders the violation and its records, one per line.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rule %d: %s", v.Rule, v.Message)
	for _, r := range v.Records {
		fmt.Fprintf(&b, "\n    %s", FormatRecord(r))
	}
	return b.String()
}

// Report is the Checker's verdict on a history.
type Report struct {
	// Violations holds up to 20 violations per rule; Counts the exact
	// number per rule.
	Violations []Violation
	Counts     map[int]int
	Summary    Summary
}

// OK reports whether the history broke no rule.
func (r *Report) OK() bool { return len(r.Counts) == 0 }

func (r *Report) add(v Violation) {
	if r.Counts == nil {
		r.Counts = map[int]int{}
	}
	r.Counts[v.Rule]++
	if r.Counts[v.Rule] <= maxViolationsPerRule {
		r.Violations = append(r.Violations, v)
	}
}

// Check judges a history (records in time order, as ReadFiles returns
// them) against the four rules and summarises it. The end of observation is
// the last KindEnd record (else the last record); rule 3 applies only when
// the history has a KindHeal record.
func Check(recs []Record, cfg CheckConfig) *Report {
	rep := &Report{}
	recs = append([]Record(nil), recs...)
	SortRecords(recs)
	end, heal := observationBounds(recs)
	byShard := buildIntervals(recs, end)
	checkWrites(rep, recs)
	overlaps := checkOverlaps(rep, byShard, faultTimes(recs))
	if !heal.IsZero() {
		checkLiveness(rep, byShard, cfg, heal, end)
	}
	for _, r := range recs {
		if r.Kind == KindLeftover {
			rep.add(Violation{Rule: RuleLeftover, Message: "left behind: " + r.Detail, Records: []Record{r}})
		}
	}
	rep.Summary = summarise(recs, byShard, end)
	rep.Summary.Overlaps = len(overlaps)
	rep.Summary.OverlapsAfter = map[string]int{}
	for _, f := range overlaps {
		rep.Summary.OverlapsAfter[f]++
	}
	return rep
}

// observationBounds returns the end of observation and the last heal.
func observationBounds(recs []Record) (end, heal time.Time) {
	for _, r := range recs {
		switch r.Kind {
		case KindEnd:
			end = r.Time
		case KindHeal:
			heal = r.Time
		}
	}
	if end.IsZero() && len(recs) > 0 {
		end = recs[len(recs)-1].Time
	}
	return end, heal
}

// checkWrites enforces rule 1 on every resource: no accepted write may carry
// a fence lower than an accepted write that ended before it started.
func checkWrites(rep *Report, recs []Record) {
	byRes := map[string][]Record{}
	for _, r := range recs {
		if r.Kind == KindWrite && r.Result == Accepted {
			byRes[r.Resource] = append(byRes[r.Resource], r)
		}
	}
	for _, res := range sortedKeys(byRes) {
		checkResource(rep, res, byRes[res])
	}
}

func checkResource(rep *Report, res string, ws []Record) {
	byStart := append([]Record(nil), ws...)
	sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].Start.Before(byStart[j].Start) })
	byEnd := ws // already in end (Time) order
	var best *Record
	k := 0
	for i := range byStart {
		w := byStart[i]
		for ; k < len(byEnd) && byEnd[k].Time.Before(w.Start); k++ {
			if best == nil || fenceOf(byEnd[k]).Compare(fenceOf(*best)) > 0 {
				best = &byEnd[k]
			}
		}
		if best != nil && fenceOf(w).Compare(fenceOf(*best)) < 0 {
			rep.add(Violation{
				Rule: RuleStaleAccepted,
				Message: fmt.Sprintf("%s accepted token %s from %s after it had accepted %s from %s",
					res, w.Token, w.Member, best.Token, best.Member),
				Records: []Record{*best, w},
			})
		}
	}
}

func fenceOf(r Record) zxidfence.Fence {
	return zxidfence.Fence{Generation: r.Generation, Token: r.Token}
}

// checkOverlaps enforces rule 2: of two overlapping terms of a shard, the
// one that started later must hold the higher token.
// It returns, for every overlapping pair it saw, the last fault injected
// before the later term began ("none" if there was none).
func checkOverlaps(rep *Report, byShard map[string][]interval, faults []Record) (overlaps []string) {
	for _, shard := range sortedKeys(byShard) {
		ivs := byShard[shard]
		for i := range ivs {
			for j := i + 1; j < len(ivs) && ivs[j].start.Before(ivs[i].end); j++ {
				a, b := ivs[i], ivs[j]
				if a.term == b.term {
					continue
				}
				overlaps = append(overlaps, lastFaultBefore(faults, b.start))
				if b.token <= a.token {
					rep.add(Violation{
						Rule: RuleOverlap,
						Message: fmt.Sprintf("shard %s: %s acted with token %s from %s while %s acted with token %s (%s to %s)",
							shard, b.member, b.token, stamp(b.start), a.member, a.token, stamp(a.start), stamp(a.end)),
						Records: []Record{a.acquire, b.acquire},
					})
				}
			}
		}
	}
	return overlaps
}

// faultTimes returns the KindFault records, in time order.
func faultTimes(recs []Record) []Record {
	var out []Record
	for _, r := range recs {
		if r.Kind == KindFault {
			out = append(out, r)
		}
	}
	return out
}

// lastFaultBefore names the last fault injected at or before t.
func lastFaultBefore(faults []Record, t time.Time) string {
	i := sort.Search(len(faults), func(i int) bool { return faults[i].Time.After(t) })
	if i == 0 {
		return "none"
	}
	return faults[i-1].Fault
}

// checkLiveness enforces rule 3 on every expected shard: within [heal, end]
// no stretch without an acting leader may exceed the limit (the stretch
// before the end counts too), and a shard must be led at the end if the
// observation lasted the whole limit.
func checkLiveness(rep *Report, byShard map[string][]interval, cfg CheckConfig, heal, end time.Time) {
	limit := cfg.SessionTimeout + cfg.Bound
	for _, shard := range cfg.Shards {
		gap, led := longestGap(byShard[shard], heal, end)
		switch {
		case gap > limit:
			rep.add(Violation{Rule: RuleUnavailable, Message: fmt.Sprintf(
				"shard %s was without an acting leader for %s after the last heal (limit %s)",
				shard, gap.Round(time.Millisecond), limit)})
		case !led && end.Sub(heal) >= limit:
			rep.add(Violation{Rule: RuleUnavailable, Message: fmt.Sprintf(
				"shard %s has no acting leader at the end of observation, %s after the last heal (limit %s)",
				shard, end.Sub(heal).Round(time.Millisecond), limit)})
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000000") }

// FormatRecord renders a record on one line for reports.
func FormatRecord(r Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-8s", stamp(r.Time), r.Kind)
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
	}
	add("member", r.Member)
	add("shard", r.Shard)
	if r.Token != 0 {
		add("token", r.Token.String())
	}
	add("resource", r.Resource)
	if !r.Start.IsZero() {
		add("start", stamp(r.Start))
	}
	add("result", string(r.Result))
	add("fault", r.Fault)
	add("detail", r.Detail)
	return b.String()
}
