package chaos

import (
	"sort"
	"time"

	"github.com/zkelect/zkelect/zxidfence"
)

// term identifies one leadership as members record it.
type term struct {
	member string
	shard  string
	token  zxidfence.Token
}

// interval is one acting interval: from an acquire to its release, the
// member's crash, or the end of observation.
type interval struct {
	term
	start, end time.Time
	// open is true when nothing closed it before the end of observation.
	open    bool
	acquire Record
}

// buildIntervals pairs acquires with releases (the latest open acquire of
// the same member, shard and token), closes a member's open intervals at its
// crash, and closes what is left open at end.
func buildIntervals(recs []Record, end time.Time) map[string][]interval {
	openBy := map[term][]*interval{}
	var all []*interval
	closeAt := func(iv *interval, t time.Time) {
		iv.end = t
		if t.After(end) {
			iv.open = true
		}
	}
	for _, r := range recs {
		switch r.Kind {
		case KindAcquire:
			iv := &interval{term: term{r.Member, r.Shard, r.Token}, start: r.Time, acquire: r}
			openBy[iv.term] = append(openBy[iv.term], iv)
			all = append(all, iv)
		case KindRelease:
			k := term{r.Member, r.Shard, r.Token}
			if s := openBy[k]; len(s) > 0 {
				closeAt(s[len(s)-1], r.Time)
				openBy[k] = s[:len(s)-1]
			}
		case KindCrash:
			for k, s := range openBy {
				if k.member != r.Member {
					continue
				}
				for _, iv := range s {
					closeAt(iv, r.Time)
				}
				delete(openBy, k)
			}
		}
	}
	for _, s := range openBy {
		for _, iv := range s {
			iv.end, iv.open = end, true
		}
	}
	byShard := map[string][]interval{}
	for _, iv := range all {
		byShard[iv.shard] = append(byShard[iv.shard], *iv)
	}
	for _, s := range byShard {
		sort.SliceStable(s, func(i, j int) bool {
			if !s[i].start.Equal(s[j].start) {
				return s[i].start.Before(s[j].start)
			}
			return s[i].token < s[j].token
		})
	}
	return byShard
}

// gaps returns the longest time within [from, to] not covered by any of
// ivs (sorted by start), and whether the instant to is covered.
func longestGap(ivs []interval, from, to time.Time) (gap time.Duration, coveredAtEnd bool) {
	cursor := from
	for _, iv := range ivs {
		if !iv.end.After(cursor) {
			continue
		}
		if iv.start.After(to) {
			break
		}
		if iv.start.After(cursor) {
			gap = max(gap, iv.start.Sub(cursor))
		}
		cursor = iv.end
		if !cursor.Before(to) {
			return gap, true
		}
	}
	return max(gap, to.Sub(cursor)), false
}

// Leading returns, per shard, how many terms are acting at the end of recs
// (acquired and neither released nor ended by a crash).
func Leading(recs []Record) map[string]int {
	far := time.Unix(1<<40, 0)
	out := map[string]int{}
	for shard, ivs := range buildIntervals(recs, far) {
		for _, iv := range ivs {
			if iv.open {
				out[shard]++
			}
		}
	}
	return out
}
