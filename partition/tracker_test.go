package partition_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

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
	}
}

// writeInterval spaces one leader's writes.
const writeInterval = 20 * time.Millisecond

// started is OnStartedLeading for member: it checks the token, then writes
// through the guard until ctx ends. drain is how long it keeps working after
// ctx is cancelled (a slow handoff).
func (tr *tracker) started(member string, drain time.Duration) func(ctx context.Context, shard string, token zxidfence.Token) {
	return func(ctx context.Context, shard string, token zxidfence.Token) {
		tr.begin(member, shard, token)
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
		tr.mu.Lock()
		defer tr.mu.Unlock()
		delete(tr.active[shard], member)
	}
}

func (tr *tracker) begin(member, shard string, token zxidfence.Token) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.starts[member]++
	if len(tr.active[shard]) > 0 {
		tr.overlaps++
	}
	if tr.active[shard] == nil {
		tr.active[shard] = map[string]zxidfence.Token{}
	}
	tr.active[shard][member] = token
	prev := tr.last[shard]
	if token < prev.token || (token == prev.token && member != prev.member) {
		tr.violations = append(tr.violations, fmt.Sprintf("shard %s: %s started with token %v after %s with %v", shard, member, token, prev.member, prev.token))
	}
	tr.last[shard] = leaderAt{member, token}
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
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, v := range tr.violations {
		t.Error(v)
	}
	if strict && tr.overlaps > 0 {
		t.Errorf("%d leaderships started while another member still led the shard", tr.overlaps)
	}
	t.Logf("guard: %d writes accepted, %d stale writes rejected, %d overlapping starts", tr.accepted, tr.rejected, tr.overlaps)
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
