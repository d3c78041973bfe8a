package partition_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/testenv"
)

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// warnings returns the warn and error lines logged so far.
func (l *lockedBuffer) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, `"level":"warn"`) || strings.Contains(line, `"level":"error"`) {
			out = append(out, line)
		}
	}
	return out
}

// TestStopWithZooKeeperDownIsBoundedAndLogsOneLine: a member leading 32
// shards is stopped while its ZooKeeper server is down. Run returns
// within the handoff bound (its shards' znodes cannot be deleted; the
// server deletes them with the session), and the stop logs one summary
// line for the shards, not one (or three) a shard.
func TestStopWithZooKeeperDownIsBoundedAndLogsOneLine(t *testing.T) {
	const handoff = 2 * time.Second
	zks := testenv.New(t, testenv.Options{})
	sess := connectTo(t, zks.Addrs(), 4*time.Second)
	logs := &lockedBuffer{}
	shards := partition.Range(0, 32)
	a := startMemberOn(t, sess, newRoot(t), "a", shards, newTracker(), func(c *partition.Config) {
		c.HandoffTimeout = handoff
		c.Logger = zerolog.New(logs)
	})
	waitBalanced(t, shards, []*member{a}, 20*time.Second)
	if err := zks.Stop(0); err != nil {
		t.Fatal(err)
	}
	before := len(logs.warnings())
	start := time.Now()
	a.stop(t)
	took := time.Since(start)
	lines := logs.warnings()[before:]
	t.Logf("stopped in %v with ZooKeeper down (handoff bound %v); %d warning lines:", took.Round(time.Millisecond), handoff, len(lines))
	for _, l := range lines {
		t.Log(l)
	}
	if len(lines) != 1 {
		t.Errorf("%d warning lines for stopping %d shards, want one summary line", len(lines), len(shards))
	}
}
