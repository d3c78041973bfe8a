package partition_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
)

// overLimit fails unless err is NewManager's or SetShards' refusal of a
// configuration over ZooKeeper's limit named limit.
func overLimit(t *testing.T, err error, field, limit string) {
	t.Helper()
	var ce *partition.ConfigError
	var le *partition.LimitError
	if !errors.As(err, &ce) || ce.Field != field || !errors.Is(err, partition.ErrInvalidConfig) ||
		!errors.As(err, &le) || le.Limit != limit || !errors.Is(err, partition.ErrOverLimit) || le.Bytes <= le.Max {
		t.Fatalf("got %v, want a *ConfigError for %s wrapping a *LimitError for %s", err, field, limit)
	}
}

// TestSessionBoundDefaultsAndRefusals: the default bound is 5,000
// elections a session for short paths and fewer for long ones; a bound
// whose closeSession transaction would exceed JuteMaxBuffer is refused at
// NewManager, and so are SetShards ids too long for the bound in force.
func TestSessionBoundDefaultsAndRefusals(t *testing.T) {
	sess := connect(t, sessionTimeout)
	root := "/zkelect"
	cfg := partition.Config{MemberID: "m", Shards: partition.Range(0, 100000)}
	if _, err := partition.NewManager(sess, root, cfg); err != nil {
		t.Fatalf("NewManager(100,000 shards, default bound): %v", err)
	}
	// "/zkelect/shards/999999/" and a 38-byte candidate name: 61 bytes.
	if got, want := partition.CloseSessionBytes(partition.DefaultMaxShardsPerSession, 61), 325084; got != want {
		t.Errorf("CloseSessionBytes(5000, 61) = %d, want %d (the documented arithmetic)", got, want)
	}
	long := []string{strings.Repeat("x", partition.MaxIDLength)}
	cfg.Shards, cfg.MaxShardsPerSession = long, partition.DefaultMaxShardsPerSession
	_, err := partition.NewManager(sess, root, cfg)
	overLimit(t, err, "MaxShardsPerSession", "closeSession")
	cfg.MaxShardsPerSession = 0 // the default fits the paths
	if _, err := partition.NewManager(sess, root, cfg); err != nil {
		t.Fatalf("NewManager(ids of %d bytes, default bound): %v", partition.MaxIDLength, err)
	}
	cfg.MaxShardsPerSession = -1
	if _, err := partition.NewManager(sess, root, cfg); !errors.Is(err, partition.ErrInvalidConfig) || errors.Is(err, partition.ErrOverLimit) {
		t.Errorf("NewManager(MaxShardsPerSession -1): %v, want ErrInvalidConfig (not over a limit)", err)
	}

	cfg = partition.Config{MemberID: "m", Shards: []string{"a"}, MaxShardsPerSession: 5000}
	m, err := partition.NewManager(sess, root, cfg)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	overLimit(t, m.SetShards(long), "Shards", "closeSession")
	cfg.JuteMaxBuffer = -1
	if _, err := partition.NewManager(sess, root, cfg); !errors.Is(err, partition.ErrInvalidConfig) {
		t.Errorf("NewManager(JuteMaxBuffer -1): %v, want ErrInvalidConfig", err)
	}
}

// listingAt returns shard ids whose <root>/shards listing is exactly n
// bytes: ids of MaxIDLength bytes and one shorter one.
func listingAt(n int) []string {
	per := 4 + partition.MaxIDLength
	base := partition.ListingBytes(nil)
	count, rest := (n-base)/per, (n-base)%per
	for rest < 5 { // the last id: 4 bytes of length and at least one character
		count--
		rest += per
	}
	ids := make([]string, 0, count+1)
	for i := range count {
		id := fmt.Sprintf("%06d-", i)
		ids = append(ids, id+strings.Repeat("x", partition.MaxIDLength-len(id)))
	}
	return append(ids, strings.Repeat("y", rest-4))
}

// TestShardListingAtTheLimit: a flat root (an older release's) whose
// listing of <root>/shards is exactly JuteMaxBuffer bytes is listed by
// Owners in full; one byte more is accepted by NewManager and SetShards
// (a new root holds it in buckets) and refused by Run on the flat root.
func TestShardListingAtTheLimit(t *testing.T) {
	sess := connect(t, sessionTimeout)
	root := newRoot(t)
	ids := listingAt(partition.DefaultJuteMaxBuffer)
	if n := partition.ListingBytes(ids); n != partition.DefaultJuteMaxBuffer {
		t.Fatalf("listingAt built a listing of %d bytes", n)
	}
	cfg := partition.Config{MemberID: "m", Shards: ids}
	m, err := partition.NewManager(sess, root, cfg)
	if err != nil {
		t.Fatalf("NewManager(listing of exactly jute.maxbuffer): %v", err)
	}
	over := append(ids[:len(ids)-1:len(ids)-1], ids[len(ids)-1]+"y")
	if err := m.SetShards(over); err != nil {
		t.Fatalf("SetShards(one byte over a flat listing): %v, want accepted before Run reads the layout", err)
	}
	cfg.Shards = over
	over1, err := partition.NewManager(sess, root, cfg)
	if err != nil {
		t.Fatalf("NewManager(one byte over a flat listing): %v", err)
	}

	createPersistent(t, sess.Conn(), nil, "/partition-test", root, root+"/shards")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	overLimit(t, over1.Run(ctx), "Shards", "getChildren")
	createShardZnodes(t, sess, root, ids)
	start := time.Now()
	owners, err := partition.Owners(t.Context(), sess, root)
	if err != nil {
		t.Fatalf("Owners over a listing of %d bytes: %v", partition.DefaultJuteMaxBuffer, err)
	}
	if len(owners) != len(ids) {
		t.Errorf("Owners listed %d shards, want %d", len(owners), len(ids))
	}
	t.Logf("Owners of %d shards (listing %d bytes) in %v", len(ids), partition.DefaultJuteMaxBuffer, time.Since(start))
}

// createShardZnodes creates <root>/shards/<id> for every id, a few hundred
// per multi.
func createShardZnodes(t *testing.T, sess *recipe.Session, root string, ids []string) {
	t.Helper()
	for chunk := range slices.Chunk(ids, 200) {
		ops := make([]any, len(chunk))
		for i, id := range chunk {
			ops[i] = &zk.CreateRequest{Path: path.Join(root, "shards", id), Acl: zk.WorldACL(zk.PermAll)}
		}
		if _, err := sess.Multi(t.Context(), ops...); err != nil {
			t.Fatalf("create %d shard znodes: %v", len(chunk), err)
		}
	}
}
