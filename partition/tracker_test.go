package partition_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/zxidfence"
)

// tracker is the protected resource of a test: every leader writes to it
// through one zxidfence.Memory guard while it leads, and it checks the
// partition guarantees as leaderships start and stop.
type tracker struct {
	guard *zxidfence.Memory
	every time.Duration // between one leader's writes; 0: writeInterval

	mu         sync.Mutex
	active     map[string]map[string]zxidfence.Token // shard → member → token, between start and stop
	last       map[string]leaderAt                   // shard → latest leadership started
	highest    map[string]zxidfence.Token            // shard → highest token accepted by the guard
	starts     map[string]int                        // member → leaderships started
	overlaps   int                                   // starts while another member was active
	violations []string
	accepted   int
	rejected   int
	draining   map[string]int // member → callbacks cancelled but not returned
	maxDrain   map[string]int
	reasons    map[string][]string // member → reasons reported by a child process, in order
	t0         time.Time
	events     map[string][]string // shard → its starts, returns and stops, for overlap diagnosis
	overlapped []string            // shards of the overlapping starts
	// zk, when set, is asked at an overlapping start whether the other
	// leaderships' znodes still exist: one that does is two leaders of one
	// election at once (or of two elections of one shard), a violation.
	zk      *zk.Conn
	lead    map[string]map[string]held // shard → member → its leadership, as active
	gone    int                        // overlapped leaderships whose znode was gone at the overlapping start
	pending int                        // overlapOf calls begun and not returned (under mu): check waits for them
}

// held is a leadership as the tracker knows it: its znode, and in this
// process the recipe's Leadership (nil for a child process's).
type held struct {
	znode string
	lead  *recipe.Leadership
}

type leaderAt struct {
	member string
	token  zxidfence.Token
}

func newTracker() *tracker {
	return &tracker{
		guard:    zxidfence.NewMemory(),
		active:   map[string]map[string]zxidfence.Token{},
		last:     map[string]leaderAt{},
		highest:  map[string]zxidfence.Token{},
		starts:   map[string]int{},
		draining: map[string]int{},
		maxDrain: map[string]int{},
		reasons:  map[string][]string{},
		t0:       time.Now(),
		events:   map[string][]string{},
		lead:     map[string]map[string]held{},
	}
}

// writeInterval spaces one leader's writes.
const writeInterval = 20 * time.Millisecond

// started is OnStartedLeading for member: it checks the token, then writes
// through the guard until ctx ends. drain is how long it keeps working after
// ctx is cancelled (a slow handoff).
func (tr *tracker) started(member string, drain time.Duration) func(ctx context.Context, shard string, token zxidfence.Token) {
	return func(ctx context.Context, shard string, token zxidfence.Token) {
		lead, _ := recipe.LeadershipFrom(ctx)
		tr.overlapOf(shard, tr.begin(member, shard, token, held{znodeOf(lead), lead}))
		defer tr.event(shard, "%s returned (token %v)", member, token)
		every := tr.every
		if every == 0 {
			every = writeInterval
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			tr.write(shard, token)
			select {
			case <-tick.C:
				continue
			case <-ctx.Done():
			}
			break
		}
		if drain > 0 {
			// Only a drain the member chose (a handoff, a stop: the
			// leadership still open) counts toward MaxConcurrentHandoffs;
			// leaderships lost at once (a dropped connection) drain
			// together by nature.
			chosen := 0
			if lead, ok := recipe.LeadershipFrom(ctx); ok && lead.Err() == nil {
				chosen = 1
			}
			tr.drainStep(member, chosen)
			t := time.NewTimer(drain)
			<-t.C
			tr.write(shard, token) // late write of a deposed leader: must not be accepted if another leader wrote
			tr.drainStep(member, -chosen)
		}
	}
}

// stopped is OnStoppedLeading for member.
func (tr *tracker) stopped(member string) func(shard string, reason error) {
	return func(shard string, reason error) {
		tr.event(shard, "%s stopped: %v", member, reason)
		tr.mu.Lock()
		defer tr.mu.Unlock()
		delete(tr.active[shard], member)
		delete(tr.lead[shard], member)
	}
}

// begin records member's start of leadership h of shard and returns the
// other leaderships of the shard whose OnStoppedLeading had not been
// called yet.
func (tr *tracker) begin(member, shard string, token zxidfence.Token, h held) map[string]held {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.starts[member]++
	tr.eventLocked(shard, "%s started (token %v, znode %s)", member, token, h.znode)
	var others map[string]held
	if len(tr.active[shard]) > 0 {
		tr.overlaps++
		tr.overlapped = append(tr.overlapped, shard)
		others = maps.Clone(tr.lead[shard])
		delete(others, member)
		if len(others) > 0 {
			tr.pending++ // overlapOf counts it down
		}
	}
	if tr.active[shard] == nil {
		tr.active[shard] = map[string]zxidfence.Token{}
		tr.lead[shard] = map[string]held{}
	}
	tr.active[shard][member] = token
	tr.lead[shard][member] = h
	prev := tr.last[shard]
	if token < prev.token || (token == prev.token && member != prev.member) {
		tr.violations = append(tr.violations, fmt.Sprintf("shard %s: %s started with token %v after %s with %v", shard, member, token, prev.member, prev.token))
	}
	tr.last[shard] = leaderAt{member, token}
	return others
}

// znodeOf is lead's znode, "" for a leadership not known.
func znodeOf(lead *recipe.Leadership) string {
	if lead == nil {
		return ""
	}
	return lead.Znode()
}

// event records what happened to shard, at the time since the tracker's start.
func (tr *tracker) event(shard, format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.eventLocked(shard, format, args...)
}

func (tr *tracker) eventLocked(shard, format string, args ...any) {
	tr.events[shard] = append(tr.events[shard], fmt.Sprintf("%8.3fs ", time.Since(tr.t0).Seconds())+fmt.Sprintf(format, args...))
}

func (tr *tracker) drainStep(member string, d int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.draining[member] += d
	tr.maxDrain[member] = max(tr.maxDrain[member], tr.draining[member])
}

// write does one guarded write; inside the guard it checks that no lower
// token is ever accepted after a higher one.
func (tr *tracker) write(shard string, token zxidfence.Token) {
	err := tr.guard.Do(context.Background(), shard, zxidfence.At(token), func(context.Context) error {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if token < tr.highest[shard] {
			tr.violations = append(tr.violations, fmt.Sprintf("shard %s: stale write with %v accepted after %v", shard, token, tr.highest[shard]))
		}
		tr.highest[shard] = token
		tr.accepted++
		return nil
	})
	if err != nil {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if !errors.Is(err, zxidfence.ErrStaleToken) {
			tr.violations = append(tr.violations, fmt.Sprintf("shard %s: guard: %v", shard, err))
		}
		tr.rejected++
	}
}

// check fails the test on any safety violation; with strict, also when two
// members' leaderships of one shard ever overlapped (graceful scenarios).
func (tr *tracker) check(t *testing.T, strict bool) {
	t.Helper()
	// Members may still start leaderships (and checks) while this waits,
	// so the count is read under mu, not waited on as a WaitGroup (whose
	// Add must not race its Wait).
	deadline := time.Now().Add(30 * time.Second)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for tr.pending > 0 && time.Now().Before(deadline) {
		tr.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		tr.mu.Lock()
	}
	if tr.pending > 0 {
		t.Errorf("the znode checks of overlapping starts did not return within 30s")
	}
	for _, v := range tr.violations {
		t.Error(v)
	}
	if strict && tr.overlaps > 0 {
		t.Errorf("%d leaderships started while another member still led the shard", tr.overlaps)
	}
	for _, shard := range slices.Compact(slices.Sorted(slices.Values(tr.overlapped))) {
		t.Logf("overlap on shard %s:\n\t%s", shard, strings.Join(tr.events[shard], "\n\t"))
	}
	t.Logf("guard: %d writes accepted, %d stale writes rejected, %d overlapping starts (%d overlapped leaderships checked: znode gone)", tr.accepted, tr.rejected, tr.overlaps, tr.gone)
}

// startsOf returns how many leaderships member started.
func (tr *tracker) startsOf(member string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.starts[member]
}

// reason records why a child member's leadership of a shard ended.
func (tr *tracker) reason(member, reason string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.reasons[member] = append(tr.reasons[member], reason)
}

// reasonsOf returns the reasons child member reported so far.
func (tr *tracker) reasonsOf(member string) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.reasons[member])
}
