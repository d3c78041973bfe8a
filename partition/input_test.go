package partition_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
)

func TestNewManagerRejectsBadConfig(t *testing.T) {
	sess := connect(t, sessionTimeout)
	ok := partition.Config{MemberID: "m", Shards: partition.Range(0, 3)}
	tests := []struct {
		name  string
		edit  func(*partition.Config)
		field string
	}{
		{"empty member id", func(c *partition.Config) { c.MemberID = "" }, "MemberID"},
		{"member id with slash", func(c *partition.Config) { c.MemberID = "a/b" }, "MemberID"},
		{"member id dot dot", func(c *partition.Config) { c.MemberID = ".." }, "MemberID"},
		{"empty shard id", func(c *partition.Config) { c.Shards = []string{"a", ""} }, "Shards"},
		{"shard id slash", func(c *partition.Config) { c.Shards = []string{"a/b"} }, "Shards"},
		{"shard id dot", func(c *partition.Config) { c.Shards = []string{"."} }, "Shards"},
		{"shard id dot dot", func(c *partition.Config) { c.Shards = []string{".."} }, "Shards"},
		{"shard id too long", func(c *partition.Config) { c.Shards = []string{strings.Repeat("x", partition.MaxIDLength+1)} }, "Shards"},
		{"shard id control char", func(c *partition.Config) { c.Shards = []string{"a\x00b"} }, "Shards"},
		{"shard id not utf8", func(c *partition.Config) { c.Shards = []string{"\xff"} }, "Shards"},
		{"shard id emoji", func(c *partition.Config) { c.Shards = []string{"a\U0001F600"} }, "Shards"},
		{"duplicate shard", func(c *partition.Config) { c.Shards = []string{"a", "b", "a"} }, "Shards"},
		{"negative handoff timeout", func(c *partition.Config) { c.HandoffTimeout = -time.Second }, "HandoffTimeout"},
		{"negative max handoffs", func(c *partition.Config) { c.MaxConcurrentHandoffs = -1 }, "MaxConcurrentHandoffs"},
		{"max in flight too high", func(c *partition.Config) { c.MaxInFlight = partition.MaxMaxInFlight + 1 }, "MaxInFlight"},
		{"negative expected members", func(c *partition.Config) { c.ExpectedMembers = -1 }, "ExpectedMembers"},
		{"address with terminal escapes", func(c *partition.Config) { c.Address = "\x1b[2J\x1b]0;x\a10.0.0.1:80" }, "Address"},
		{"address with a newline", func(c *partition.Config) { c.Address = "10.0.0.1:80\nfake" }, "Address"},
		{"address too long", func(c *partition.Config) { c.Address = strings.Repeat("a", 1025) }, "Address"},
		{"label value with escapes", func(c *partition.Config) { c.Labels = map[string]string{"zone": "eu\x1b[31m"} }, "Labels"},
		{"label key with a bidi override", func(c *partition.Config) { c.Labels = map[string]string{"zo\u202ene": "eu"} }, "Labels"},
		{"empty label key", func(c *partition.Config) { c.Labels = map[string]string{"": "eu"} }, "Labels"},
		{"label value too long", func(c *partition.Config) { c.Labels = map[string]string{"zone": strings.Repeat("e", 257)} }, "Labels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, err := partition.NewManager(sess, "/ok", cfg)
			var ce *partition.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, partition.ErrInvalidConfig) || ce.Field != tt.field {
				t.Fatalf("NewManager: %v, want a *ConfigError for %s", err, tt.field)
			}
		})
	}
	for _, root := range []string{"", "rel", "/", "/a/", "/a//b", "/a/./b", "/a/../b", "/zookeeper", "/zookeeper/x"} {
		if _, err := partition.NewManager(sess, root, ok); !errors.Is(err, partition.ErrInvalidRoot) {
			t.Errorf("NewManager(root %q): %v, want ErrInvalidRoot", root, err)
		}
	}
	if _, err := partition.NewManager(nil, "/ok", ok); !errors.Is(err, partition.ErrNilSession) {
		t.Errorf("NewManager(nil session): %v, want ErrNilSession", err)
	}
	m, err := partition.NewManager(sess, "/ok", ok)
	if err != nil {
		t.Fatalf("NewManager(valid): %v", err)
	}
	if err := m.SetShards([]string{"x", "x"}); !errors.Is(err, partition.ErrDuplicateShard) || !errors.Is(err, partition.ErrInvalidConfig) {
		t.Errorf("SetShards(duplicate): %v, want ErrDuplicateShard", err)
	}
	if err := m.SetShards([]string{"a/b"}); !errors.Is(err, partition.ErrInvalidShardID) {
		t.Errorf("SetShards(a/b): %v, want ErrInvalidShardID", err)
	}
}

// TestDuplicateMemberRefused: a second Manager with the same member id is
// refused, and never leads anything, whether it runs on another live
// session or on the first one's own session (which was once accepted: the
// second then silently led nothing while believing it was the member).
func TestDuplicateMemberRefused(t *testing.T) {
	for _, sameSession := range []bool{false, true} {
		name := map[bool]string{false: "other session", true: "same session"}[sameSession]
		t.Run(name, func(t *testing.T) { testDuplicateMemberRefused(t, sameSession) })
	}
}

func testDuplicateMemberRefused(t *testing.T, sameSession bool) {
	tr, root, shards := newTracker(), newRoot(t), partition.Range(0, 6)
	first := startMember(t, root, "same", shards, tr)
	waitBalanced(t, shards, []*member{first}, 20*time.Second)

	sess := first.sess
	if !sameSession {
		sess = connect(t, sessionTimeout)
	}
	second, err := partition.NewManager(sess, root, partition.Config{
		MemberID: "same", Shards: shards, OnStartedLeading: tr.started("same-2", 0),
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := second.Run(ctx); !errors.Is(err, partition.ErrDuplicateMember) {
		t.Fatalf("Run of a second live member with the same id: %v, want ErrDuplicateMember", err)
	}
	if n := tr.startsOf("same-2"); n != 0 || len(second.Leaderships()) != 0 {
		t.Fatalf("refused member led %d shards", n)
	}
	if err := second.Run(ctx); !errors.Is(err, partition.ErrAlreadyRunning) {
		t.Errorf("second Run: %v, want ErrAlreadyRunning", err)
	}
	if n := len(first.m.Leaderships()); n != len(shards) {
		t.Errorf("after the refusal the first member leads %d shards, want %d", n, len(shards))
	}
	tr.check(t, true)
}

// TestValidateIDAgreesWithZooKeeper: every id ValidateID accepts is a znode
// name the real server accepts, and every character it refuses the server
// refuses too, at each edge of ZooKeeper's forbidden ranges. An id with an
// emoji (above U+FFFF, a UTF-16 surrogate pair) was once accepted and then
// failed in every campaign with "invalid arguments".
func TestValidateIDAgreesWithZooKeeper(t *testing.T) {
	conn := connect(t, sessionTimeout).Conn()
	parent := newRoot(t)
	for _, p := range []string{"/partition-test", parent} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	edges := []rune{0x1f, 0x20, 0x7e, 0x7f, 0x9f, 0xa0, 0xe9, 0xd7ff, 0xf8ff, 0xf900,
		0xffef, 0xfff0, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	for _, r := range edges {
		id := "id" + string(r)
		validErr := partition.ValidateID(id)
		_, zkErr := conn.Create(parent+"/"+id, nil, 0, zk.WorldACL(zk.PermAll))
		if (validErr == nil) != (zkErr == nil) {
			t.Errorf("%U: ValidateID = %v, but ZooKeeper's create = %v", r, validErr, zkErr)
		}
		if validErr != nil && !errors.Is(validErr, partition.ErrInvalidShardID) {
			t.Errorf("%U: ValidateID = %v, want ErrInvalidShardID", r, validErr)
		}
	}
}
