package partition_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/rs/zerolog"

	"github.com/zkelect/zkelect/partition"
	"github.com/zkelect/zkelect/recipe"
	"github.com/zkelect/zkelect/testenv"
)

// TestRunUnderReadOnlyParentIsACLDenied: a root under a znode nobody may
// create children in fails at once with recipe.ErrACLDenied, as recipe's
// own refusals do; it once returned a bare "zk: not authenticated".
func TestRunUnderReadOnlyParentIsACLDenied(t *testing.T) {
	sess := connect(t, sessionTimeout)
	parent := newRoot(t)
	for _, p := range []string{"/partition-test", parent} {
		acl := zk.WorldACL(zk.PermAll)
		if p == parent {
			acl = zk.WorldACL(zk.PermRead)
		}
		if _, err := sess.Conn().Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	m, err := partition.NewManager(sess, parent+"/part", partition.Config{MemberID: "m", Shards: partition.Range(0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = m.Run(ctx)
	if !errors.Is(err, recipe.ErrACLDenied) || !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Run under a read-only parent = %v; want recipe.ErrACLDenied wrapping zk.ErrNoAuth", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Run returned only when its context ended: %v", err)
	}
}

// groupCred is the digest identity the group of members in the ACL tests
// share.
var groupCred = [2]string{"partition-group", "group-secret"}

// connectAs opens a session on the shared server authenticated by opts,
// closed at cleanup.
func connectAs(t testing.TB, opts ...recipe.SessionOption) *recipe.Session {
	t.Helper()
	return connectAsTo(t, zkc.Addrs(), opts...)
}

// connectAsTo is connectAs to addrs.
func connectAsTo(t testing.TB, addrs []string, opts ...recipe.SessionOption) *recipe.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// A minute to connect: a loaded machine's servers are slow at their
	// first TLS handshakes.
	opts = append([]recipe.SessionOption{recipe.WithSessionTimeout(sessionTimeout), recipe.WithLogger(zerolog.Nop()),
		recipe.WithConnectTimeout(time.Minute)}, opts...)
	sess, err := recipe.Connect(ctx, addrs, opts...)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// withGroupACL makes a member create every znode with recipe.GroupACL.
func withGroupACL(c *partition.Config) { c.ACL = recipe.GroupACL() }

// TestGroupACLStopsOtherClients: with recipe.GroupACL and the group's
// credentials, a client without them can read everything but cannot delete
// a leader's znode, forge a member registration or overwrite a member's
// record; the leaders lead on. With digest credentials on the shared
// server, and end to end over TLS with SASL DIGEST-MD5 logins.
func TestGroupACLStopsOtherClients(t *testing.T) {
	t.Run("digest", func(t *testing.T) {
		checkGroupACLStopsOthers(t, func() *recipe.Session {
			return connectAs(t, recipe.WithDigestAuth(groupCred[0], groupCred[1]))
		}, connect(t, sessionTimeout))
	})
	t.Run("SASL over TLS", func(t *testing.T) {
		// Sessions of 6s: a loaded machine is slow at TLS handshakes, and a
		// 1s session would keep reconnecting.
		zks := testenv.New(t, testenv.Options{TLS: &testenv.TLSOptions{}, SASLUsers: map[string]string{groupCred[0]: groupCred[1]},
			MaxSessionTimeout: 20 * time.Second})
		files, _ := zks.TLSFiles()
		cfg, err := files.ClientConfig(false)
		if err != nil {
			t.Fatal(err)
		}
		checkGroupACLStopsOthers(t, func() *recipe.Session {
			return connectAsTo(t, zks.SecureAddrs(), recipe.WithTLS(cfg), recipe.WithSASL(groupCred[0], groupCred[1]),
				recipe.WithSessionTimeout(6*time.Second))
		}, connectAsTo(t, zks.SecureAddrs(), recipe.WithTLS(cfg), recipe.WithSessionTimeout(6*time.Second)))
	})
}

// checkGroupACLStopsOthers runs two members on sessions from group and
// checks that the session other cannot change their znodes.
func checkGroupACLStopsOthers(t *testing.T, group func() *recipe.Session, otherSess *recipe.Session) {
	root, shards, tr := securedRoot(t), partition.Range(0, 4), newTracker()
	var ms []*member
	for _, id := range []string{"a", "b"} {
		ms = append(ms, startMemberOn(t, group(), root, id, shards, tr, withGroupACL))
	}
	lead, _ := waitBalanced(t, shards, ms, 20*time.Second)
	before := ms[0].m.Leaderships()

	other := otherSess.Conn()
	shardDir := electionOf(t, otherSess, root, shards[0])
	znodes, _, err := other.Children(shardDir)
	if err != nil || len(znodes) == 0 {
		t.Fatalf("an unauthenticated client lists %s: %v, %v; want the candidates (anyone may read)", shardDir, znodes, err)
	}
	for _, z := range znodes {
		if err := other.Delete(shardDir+"/"+z, -1); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("an unauthenticated client deleting candidate %s/%s: %v; want zk.ErrNoAuth", shardDir, z, err)
		}
	}
	if _, err := other.Create(root+"/members/forged", []byte("x"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an unauthenticated client registering a forged member: %v; want zk.ErrNoAuth", err)
	}
	record := root + "/owners/" + lead[shards[0]]
	data, _, err := other.Get(record)
	if err != nil || len(data) == 0 {
		t.Fatalf("an unauthenticated client reads the record %s: %q, %v; want it (anyone may read)", record, data, err)
	}
	if _, err := other.Set(record, []byte(`{"forged":true}`), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an unauthenticated client overwriting the record %s: %v; want zk.ErrNoAuth", record, err)
	}
	for s, tok := range before {
		if now, ok := ms[0].m.Leaderships()[s]; !ok || now != tok {
			t.Errorf("shard %s: leadership with token %v became %v (led: %v) after the refused writes; want unchanged", s, tok, now, ok)
		}
	}
	tr.check(t, true)
}

// TestMemberWithoutGroupCredentialsIsRefused: a member without the group's
// credentials (none, or another digest identity) fails at Run, at once,
// with recipe.ErrACLDenied, and does not lead.
func TestMemberWithoutGroupCredentialsIsRefused(t *testing.T) {
	root, shards, tr := securedRoot(t), partition.Range(0, 2), newTracker()
	group := startMemberOn(t, connectAs(t, recipe.WithDigestAuth(groupCred[0], groupCred[1])), root, "a", shards, tr, withGroupACL)
	waitBalanced(t, shards, []*member{group}, 20*time.Second)
	for name, opts := range map[string][]recipe.SessionOption{
		"without credentials":   nil,
		"with another identity": {recipe.WithDigestAuth("intruder", "guess")},
		"with a wrong password": {recipe.WithDigestAuth(groupCred[0], "guess")},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := partition.NewManager(connectAs(t, opts...), root, partition.Config{MemberID: "x", Shards: shards, ACL: recipe.GroupACL()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = m.Run(ctx)
			if !errors.Is(err, recipe.ErrACLDenied) {
				t.Fatalf("Run = %v; want recipe.ErrACLDenied", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("Run returned only when its context ended: %v", err)
			}
			t.Logf("refused: %v", err)
		})
	}
	if got := len(group.m.Leaderships()); got != len(shards) {
		t.Errorf("the group's member leads %d of %d shards after the refusals; want all", got, len(shards))
	}
}
