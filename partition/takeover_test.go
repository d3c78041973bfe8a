package partition_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/zkelect/zkelect/partition"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestMemberRestartedAfterKillWaitsForOldSession kills a member's process
// (SIGKILL) and at once starts the same member id again: Run waits, saying
// what for, until ZooKeeper expires the dead run's session, then registers
// and leads; it is not refused as a duplicate.
func TestMemberRestartedAfterKillWaitsForOldSession(t *testing.T) {
	const n = 4
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, n)
	child := startChild(t, "k", root, n, tr.serve(t))
	waitFor(t, 30*time.Second, "the child to lead every shard", func() (bool, string) {
		s := tr.startsOf("k")
		return s == n, fmt.Sprintf("%d of %d started", s, n)
	})
	if err := child.Kill(); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	logs := &syncBuffer{}
	again := startMember(t, root, "k", shards, tr, func(c *partition.Config) {
		c.Logger = zerolog.New(logs)
	})
	waitFor(t, 30*time.Second, "the restarted member to lead every shard", func() (bool, string) {
		select {
		case <-again.ended:
			return true, "Run returned"
		default:
		}
		l := len(again.m.Leaderships())
		return l == n, fmt.Sprintf("leads %d of %d", l, n)
	})
	select {
	case <-again.ended:
		t.Fatalf("the member restarted after SIGKILL ended: %v", <-again.done)
	default:
	}
	if !strings.Contains(logs.String(), "waiting for it to expire") {
		t.Errorf("the restarted member did not log what it waited for:\n%s", logs.String())
	}
}

// TestDuplicateMemberRefusedAfterWait starts a second live member with the
// same id on another session: after waiting for the first one's session to
// expire (it does not), Run is refused with ErrDuplicateMember.
func TestDuplicateMemberRefusedAfterWait(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 2)
	first := startMember(t, root, "twin", shards, tr)
	waitBalanced(t, shards, []*member{first}, 20*time.Second)
	second, err := partition.NewManager(connect(t, sessionTimeout), root, partition.Config{MemberID: "twin", Shards: shards})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err = second.Run(ctx)
	if !errors.Is(err, partition.ErrDuplicateMember) || !strings.Contains(err.Error(), "after waiting") {
		t.Fatalf("Run of a second live member: %v, want ErrDuplicateMember after a wait", err)
	}
	if took := time.Since(start); took < sessionTimeout {
		t.Errorf("refused after %v, before a session timeout (%v) had passed", took, sessionTimeout)
	}
	// The refused member must not have taken the live one's shards for
	// good; a loaded machine may suspend the live session meanwhile, so it
	// gets a bound to lead them again.
	waitFor(t, 20*time.Second, "the live member to lead its shards after the refusal", func() (bool, string) {
		n := len(first.m.Leaderships())
		return n == len(shards), fmt.Sprintf("leads %d of %d", n, len(shards))
	})
}

// TestManagerLogsMemberOnce gives the Manager a logger that already names
// the member: no log line carries the field twice.
func TestManagerLogsMemberOnce(t *testing.T) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 2)
	logs := &syncBuffer{}
	mb := startMember(t, root, "once", shards, tr, func(c *partition.Config) {
		c.Logger = zerolog.New(logs).With().Str("member", "once").Logger()
	})
	waitBalanced(t, shards, []*member{mb}, 20*time.Second)
	mb.stop(t)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatal("the Manager logged nothing")
	}
	for _, l := range lines {
		if n := strings.Count(l, `"member":`); n != 1 {
			t.Errorf("%d member fields in %s", n, l)
		}
		if n := strings.Count(l, `"root":`); n != 1 {
			t.Errorf("%d root fields in %s", n, l)
		}
	}
}
